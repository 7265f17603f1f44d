/* heap_cxx.cpp: C++ allocations and the shared heap. After attach, operator new and
 * delete (plain, array, nothrow, aligned), std::vector, std::string, node containers,
 * objects made in another thread and thrown exceptions land in the slice when malloc
 * is interposed; a std allocator over hmpi_heap_* puts containers there always. */
extern "C" {
#include "heap/heap.h"
}
#include "test_util.h"

#include <map>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#ifndef HMPI_NO_MALLOC_INTERPOSE
static const bool interposed = true;
#else
static const bool interposed = false;
#endif

static bool attached = false;

/* Where memory from new and the standard containers must be. */
static void check_new(const void *p, size_t n, const char *what)
{
    CHECK(p != nullptr, "%s: null", what);
    if (attached && interposed)
        CHECK(hmpi_heap_is_shared_range(p, n) && hmpi_heap_owner(p) == 0,
              "%s: %p (%zu B) is not in the shared slice", what, p, n);
    if (!attached)
        CHECK(!hmpi_heap_is_shared(p), "%s: %p is shared before attach", what, p);
}

/* A std allocator over the explicit API: in the slice whatever owns malloc. */
template <class T> struct shared_alloc {
    using value_type = T;
    shared_alloc() = default;
    template <class U> shared_alloc(const shared_alloc<U> &) {}
    T *allocate(size_t n)
    {
        void *p = hmpi_heap_malloc(n * sizeof(T));
        if (p == nullptr)
            throw std::bad_alloc();
        return static_cast<T *>(p);
    }
    void deallocate(T *p, size_t) { hmpi_heap_free(p); }
    template <class U> bool operator==(const shared_alloc<U> &) const { return true; }
    template <class U> bool operator!=(const shared_alloc<U> &) const { return false; }
};

struct alignas(256) aligned_obj {
    unsigned char bytes[700];
};

static void exercise(const char *phase)
{
    char what[128];

    int *single = new int(42);
    snprintf(what, sizeof what, "%s: new int", phase);
    check_new(single, sizeof *single, what);
    CHECK(*single == 42, "%s", what);
    delete single;

    const size_t n = 100000;
    unsigned *arr = new unsigned[n];
    snprintf(what, sizeof what, "%s: new[]", phase);
    check_new(arr, n * sizeof *arr, what);
    for (size_t i = 0; i < n; i++)
        arr[i] = (unsigned)(i * 2654435761u);
    for (size_t i = 0; i < n; i++)
        CHECK(arr[i] == (unsigned)(i * 2654435761u), "%s: element %zu", what, i);
    delete[] arr;

    int *nt = new (std::nothrow) int[1000];
    snprintf(what, sizeof what, "%s: new(nothrow)[]", phase);
    check_new(nt, 1000 * sizeof(int), what);
    delete[] nt;

    auto *al = new aligned_obj;
    snprintf(what, sizeof what, "%s: aligned new", phase);
    check_new(al, sizeof *al, what);
    CHECK(reinterpret_cast<uintptr_t>(al) % 256 == 0, "%s: %p not 256-aligned", what,
          static_cast<void *>(al));
    pat_fill(al->bytes, sizeof al->bytes, 3);
    CHECK(pat_check(al->bytes, sizeof al->bytes, 3) == (size_t)-1, "%s: content", what);
    delete al;
    auto *als = new aligned_obj[5];
    CHECK(reinterpret_cast<uintptr_t>(als) % 256 == 0, "%s: aligned new[] misaligned", phase);
    check_new(als, 5 * sizeof *als, what);
    delete[] als;

    std::vector<double> v(200000);
    snprintf(what, sizeof what, "%s: std::vector<double>", phase);
    check_new(v.data(), v.size() * sizeof(double), what);
    for (double d : v)
        CHECK(d == 0.0, "%s: not value-initialised", what);
    for (size_t i = 0; i < v.size(); i++)
        v[i] = (double)i * 0.5;
    std::vector<double> grown;
    for (size_t i = 0; i < v.size(); i++)
        grown.push_back(v[i]);
    check_new(grown.data(), grown.size() * sizeof(double), what);
    CHECK(grown == v, "%s: copy by push_back differs", what);

    std::string s(5000, 'x');
    for (size_t i = 0; i < s.size(); i++)
        s[i] = (char)('a' + i % 26);
    snprintf(what, sizeof what, "%s: std::string", phase);
    check_new(s.data(), s.size() + 1, what);
    std::string t = s + s;
    check_new(t.data(), t.size() + 1, what);
    CHECK(t.size() == 10000 && t.compare(5000, 5000, s) == 0, "%s: concatenation", what);

    std::vector<std::string> words;
    for (int i = 0; i < 2000; i++)
        words.push_back("a word longer than the small-string buffer #" + std::to_string(i));
    snprintf(what, sizeof what, "%s: vector of strings", phase);
    for (int i = 0; i < 2000; i++) {
        check_new(words[i].data(), words[i].size(), what);
        CHECK(words[i] == "a word longer than the small-string buffer #" + std::to_string(i),
              "%s: element %d", what, i);
    }

    std::map<int, std::string> m;
    for (int i = 0; i < 500; i++)
        m[i * 7] = std::to_string(i);
    snprintf(what, sizeof what, "%s: std::map node", phase);
    for (auto &kv : m)
        check_new(&kv, sizeof kv, what);
    CHECK(m.size() == 500 && m[7 * 499] == "499", "%s: content", what);

    /* Made in another thread, checked and freed here. */
    std::unique_ptr<std::vector<int>> from_thread;
    std::thread th([&] {
        from_thread.reset(new std::vector<int>(50000));
        for (int i = 0; i < 50000; i++)
            (*from_thread)[i] = i ^ 0x5a5a;
    });
    th.join();
    snprintf(what, sizeof what, "%s: vector from another thread", phase);
    check_new(from_thread->data(), from_thread->size() * sizeof(int), what);
    for (int i = 0; i < 50000; i++)
        CHECK((*from_thread)[i] == (i ^ 0x5a5a), "%s: element %d", what, i);
    from_thread.reset();

    /* The exception object comes from malloc too. */
    bool caught = false;
    try {
        throw std::runtime_error(std::string(300, 'e'));
    } catch (const std::runtime_error &e) {
        snprintf(what, sizeof what, "%s: exception object", phase);
        check_new(&e, sizeof e, what);
        CHECK(std::string(e.what()) == std::string(300, 'e'), "%s: message", what);
        caught = true;
    }
    CHECK(caught, "%s: exception not caught", phase);

    /* The explicit API through a std allocator. */
    std::vector<unsigned, shared_alloc<unsigned>> sv;
    for (unsigned i = 0; i < 100000; i++)
        sv.push_back(i * 3u);
    if (attached)
        CHECK(hmpi_heap_is_shared_range(sv.data(), sv.size() * sizeof(unsigned)),
              "%s: vector with the shared allocator is not in the slice", phase);
    for (unsigned i = 0; i < 100000; i++)
        CHECK(sv[i] == i * 3u, "%s: shared vector element %u", phase, i);
}

int main()
{
    static region_fixture_t fx;
    fixture_make(&fx, 1, (size_t)1 << 30);
    exercise("before attach");
    CHECK(hmpi_heap_attach(fx.base, HMPI_REGION_ALIGN, fx.shift, 1, 0, fx.fd) == 0, "attach");
    fixture_unlink(&fx);
    attached = true;
    exercise("after attach");
    printf("heap_cxx: ok (%s interposed malloc)\n", interposed ? "with" : "without");
    return 0;
}
