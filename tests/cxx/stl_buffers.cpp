// stl_buffers.cpp: C++ containers as message buffers. After MPI_Init, operator new (and
// so std::vector, std::string, std::make_unique) allocates from the shared heap:
// HMPI_Is_shared(v.data()) holds, and messages between ranks of a node take the
// heap protocols (copied once, no process_vm_readv, no bounce). Pairs of ranks
// (0-1, 2-3, ...) exchange vectors of several element types; every element is checked.
#include <hmpi.h>
#include <mpi.h>

#include <complex>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#ifdef HMPI_TEST_PLAIN
#include <dlfcn.h>
#endif

namespace
{

int failures = 0;

// The plain build (run under hmpirun) does not link libhmpi: it finds HMPI_Is_shared in
// the preloaded library, and reports 0 without it.
int is_shared(const void *p)
{
#ifdef HMPI_TEST_PLAIN
    using fn_t = int (*)(const void *);
    static fn_t fn = reinterpret_cast<fn_t>(dlsym(RTLD_DEFAULT, "HMPI_Is_shared"));
    return fn ? fn(p) : 0;
#else
    return HMPI_Is_shared(p);
#endif
}

void check(bool ok, const char *what, int rank)
{
    if (!ok) {
        std::fprintf(stderr, "rank %d: FAIL %s\n", rank, what);
        ++failures;
    }
}

// Sends v to peer and receives the peer's vector of the same length into a fresh one.
template <typename T>
std::vector<T> exchange(const std::vector<T> &v, MPI_Datatype type, int peer, int tag)
{
    std::vector<T> in(v.size());
    MPI_Sendrecv(v.data(), static_cast<int>(v.size()), type, peer, tag, in.data(),
                 static_cast<int>(in.size()), type, peer, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    return in;
}

} // namespace

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = 0, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size % 2 != 0)
        MPI_Abort(MPI_COMM_WORLD, 2);
    const int peer = rank ^ 1;
    const int iters = 10;

    for (int it = 0; it < iters; it++) {
        // doubles: 800 KB, synergistic
        std::vector<double> d(100000);
        check(is_shared(d.data()) == 1, "vector<double> is in the shared heap", rank);
        for (size_t i = 0; i < d.size(); i++)
            d[i] = rank * 1e7 + static_cast<double>(i) + it * 0.5;
        std::vector<double> din = exchange(d, MPI_DOUBLE, peer, 1);
        for (size_t i = 0; i < din.size(); i++)
            if (din[i] != peer * 1e7 + static_cast<double>(i) + it * 0.5) {
                check(false, "vector<double> contents", rank);
                break;
            }

        // complex numbers: 16 KB
        std::vector<std::complex<double>> c(1000);
        for (size_t i = 0; i < c.size(); i++)
            c[i] = {static_cast<double>(rank), static_cast<double>(i + it)};
        std::vector<std::complex<double>> cin = exchange(c, MPI_CXX_DOUBLE_COMPLEX, peer, 2);
        for (size_t i = 0; i < cin.size(); i++)
            if (cin[i] != std::complex<double>(peer, static_cast<double>(i + it))) {
                check(false, "vector<complex<double>> contents", rank);
                break;
            }

        // a few ints: inline (immediate protocol)
        std::vector<int> n{rank, it, 42, -rank};
        std::vector<int> nin = exchange(n, MPI_INT, peer, 3);
        check(nin == std::vector<int>({peer, it, 42, -peer}), "vector<int> contents", rank);

        // a string's characters, and a unique_ptr<double[]> (operator new[])
        std::string s = "rank " + std::to_string(rank) + " iteration " + std::to_string(it) +
                        std::string(300, 'x');
        std::string sin(s.size(), '\0');
        check(is_shared(s.data()) == 1, "std::string is in the shared heap", rank);
        MPI_Sendrecv(s.data(), static_cast<int>(s.size()), MPI_CHAR, peer, 4, sin.data(),
                     static_cast<int>(sin.size()), MPI_CHAR, peer, 4, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        check(sin == "rank " + std::to_string(peer) + " iteration " + std::to_string(it) +
                         std::string(300, 'x'),
              "std::string contents", rank);

        auto u = std::make_unique<double[]>(5000);
        check(is_shared(u.get()) == 1, "new double[] is in the shared heap", rank);
        for (int i = 0; i < 5000; i++)
            u[i] = rank + i;
        auto uin = std::make_unique<double[]>(5000);
        MPI_Request r[2];
        MPI_Irecv(uin.get(), 5000, MPI_DOUBLE, peer, 5, MPI_COMM_WORLD, &r[0]);
        MPI_Isend(u.get(), 5000, MPI_DOUBLE, peer, 5, MPI_COMM_WORLD, &r[1]);
        MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
        for (int i = 0; i < 5000; i++)
            if (uin[i] != peer + i) {
                check(false, "unique_ptr<double[]> contents", rank);
                break;
            }
    }

    int all = 0;
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0 && all == 0)
        std::printf("stl_buffers: OK\n");
    MPI_Finalize();
    return all == 0 ? 0 : 1;
}
