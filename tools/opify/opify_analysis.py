# opify_analysis: the backward pattern analyses of hmpi-opify (docs/opify.md).
# Builds a statement-level control flow graph per function from libclang's AST, turns
# every statement into a list of buffer events and runs the sender and receiver state
# machines backwards to a fixpoint. Reads the AST only; never edits source.

import clang.cindex as ci

K = ci.CursorKind

SEND_CALLS = {'MPI_Send': 'OPI_Give', 'MPI_Isend': 'OPI_Igive'}
RECV_CALLS = {'MPI_Recv': 'OPI_Take', 'MPI_Irecv': 'OPI_Itake'}
# Other point-to-point calls: they take part in message matching, so a tag they use
# is never rewritten to OPI (OPI gives match OPI takes only).
OTHER_P2P = {
    'MPI_Ssend': 4, 'MPI_Bsend': 4, 'MPI_Rsend': 4, 'MPI_Issend': 4, 'MPI_Ibsend': 4,
    'MPI_Irsend': 4, 'MPI_Send_init': 4, 'MPI_Recv_init': 4, 'MPI_Ssend_init': 4,
    'MPI_Probe': 1, 'MPI_Iprobe': 1, 'MPI_Mprobe': 1, 'MPI_Improbe': 1,
    'MPI_Sendrecv': None, 'MPI_Sendrecv_replace': None,
}
ALLOC_CALLS = ('malloc', 'calloc')

# Sender states (backward): End, OpenPack, ClosedPack, EorCP, Start, Fail.
# Receiver states (backward): End, Empty, Unpack, Dead, Start, Fail.
END, OPEN, CLOSED, EORCP, START, FAIL = 'End', 'OpenPack', 'ClosedPack', 'EorCP', 'Start', 'Fail'
EMPTY, UNPACK, DEAD = 'Empty', 'Unpack', 'Dead'


class Event(object):
    """One operation of a statement on one buffer (kind in R W CW SND RCV ALLOC FREE NULL
    FAIL; for the receiver R/W carry inside=True/False)."""

    def __init__(self, kind, var, cursor, why=None, inside=None, call=None):
        self.kind = kind
        self.var = var
        self.cursor = cursor
        self.why = why
        self.inside = inside
        self.call = call


class Node(object):
    def __init__(self, cursor, kind='stmt'):
        self.cursor = cursor
        self.kind = kind      # stmt, cond, entry, exit, pack, scope_end
        self.succs = []
        self.events = []
        self.stmt = None      # statement to insert code before (rewrite), if any
        self.in_block = False


class CommCall(object):
    """A call of MPI_Send/Isend/Recv/Irecv (or another point-to-point call)."""

    def __init__(self, cursor, name, args):
        self.cursor = cursor
        self.name = name
        self.args = args          # list of (text, first token, last token)
        self.var = None           # buffer variable (DeclRef) if plain
        self.verdict = None
        self.reason = None
        self.role = None


def loc(c):
    l = c.location if hasattr(c, 'location') else c
    return '%s:%d:%d' % (l.file.name if l.file else '?', l.line, l.column)


def strip(c):
    """The expression under implicit conversions, parentheses and casts."""
    while c is not None and c.kind in (K.UNEXPOSED_EXPR, K.PAREN_EXPR, K.CSTYLE_CAST_EXPR):
        kids = [k for k in c.get_children() if k.kind != K.TYPE_REF]
        if len(kids) != 1:
            break
        c = kids[0]
    return c


def is_null(c):
    c = strip(c)
    return c is not None and c.kind == K.INTEGER_LITERAL and \
        [t.spelling for t in c.get_tokens()] in (['0'], ['NULL'], [])


class Source(object):
    """The main file's tokens, for text the AST does not give (operators, literals)."""

    def __init__(self, tu, path):
        self.tu = tu
        self.path = path
        with open(path) as f:
            self.text = f.read()
        self.raw = self.text.encode()
        self.toks = [t for t in tu.get_tokens(extent=tu.cursor.extent)
                     if t.location.file and t.location.file.name == tu.spelling]
        self.offs = [t.extent.start.offset for t in self.toks]

    def in_main(self, c):
        return c.location.file is not None and c.location.file.name == self.tu.spelling

    def index_at(self, off):
        import bisect
        return bisect.bisect_left(self.offs, off)

    def tok_after(self, off):
        i = self.index_at(off)
        return self.toks[i].spelling if i < len(self.toks) else None

    def tok_at(self, off):
        i = self.index_at(off)
        if i < len(self.toks) and self.offs[i] == off:
            return self.toks[i].spelling
        return None

    def group(self, open_off):
        """Tokens inside the bracket opening at or after open_off, split at top-level
        commas or semicolons: list of token lists, and the closing token index."""
        i = self.index_at(open_off)
        while i < len(self.toks) and self.toks[i].spelling not in ('(', '['):
            i += 1
        depth = 0
        parts = [[]]
        for j in range(i, len(self.toks)):
            s = self.toks[j].spelling
            if s in ('(', '[', '{'):
                depth += 1
                if depth == 1:
                    continue
            elif s in (')', ']', '}'):
                depth -= 1
                if depth == 0:
                    return parts, j
            elif depth == 1 and s in (',', ';'):
                parts.append([])
                continue
            parts[-1].append(self.toks[j])
        return parts, len(self.toks) - 1

    def span(self, toks):
        if not toks:
            return ''
        a = toks[0].extent.start.offset
        b = toks[-1].extent.end.offset
        return self.raw[a:b].decode()


def words(toks):
    return ' '.join(t.spelling for t in toks)


def const_value(c):
    """The integer value of a constant expression (macros included), or None."""
    import ctypes
    if c is None:
        return None
    lib = ci.conf.lib
    if not getattr(const_value, 'ready', False):
        lib.clang_Cursor_Evaluate.argtypes = [ci.Cursor]
        lib.clang_Cursor_Evaluate.restype = ctypes.c_void_p
        lib.clang_EvalResult_getKind.argtypes = [ctypes.c_void_p]
        lib.clang_EvalResult_getKind.restype = ctypes.c_int
        lib.clang_EvalResult_getAsLongLong.argtypes = [ctypes.c_void_p]
        lib.clang_EvalResult_getAsLongLong.restype = ctypes.c_longlong
        lib.clang_EvalResult_dispose.argtypes = [ctypes.c_void_p]
        const_value.ready = True
    r = lib.clang_Cursor_Evaluate(c)
    if not r:
        return None
    try:
        return lib.clang_EvalResult_getAsLongLong(r) if lib.clang_EvalResult_getKind(r) == 1 else None
    finally:
        lib.clang_EvalResult_dispose(r)


def int_value(s):
    try:
        return int(s.rstrip('uUlL'), 0)
    except ValueError:
        return None


class Loop(object):
    """A counted loop `for (i = LO; i < HI; i++)` with i not written in its body."""

    def __init__(self, cursor, var, lo, hi_text, body):
        self.cursor = cursor
        self.var = var
        self.lo = lo
        self.hi = hi_text
        self.body = body
        self.hi_value = None


def walk(c):
    yield c
    for k in c.get_children():
        for d in walk(k):
            yield d


def decl_of(c):
    c = strip(c)
    if c is not None and c.kind == K.DECL_REF_EXPR and c.referenced is not None and \
            c.referenced.kind in (K.VAR_DECL, K.PARM_DECL):
        return c.referenced
    return None


class Function(object):
    """Analysis of one function definition."""

    def __init__(self, src, fn, result):
        self.src = src
        self.fn = fn
        self.result = result
        self.nodes = []
        self.tracked = {}         # var hash -> Buffer
        self.written_vars = set()  # hashes of variables assigned outside declarations
        self.unsupported = None

    # ---- variables written anywhere (for loop bounds and counts that must not change)
    def scan_writes(self):
        for c in walk(self.fn):
            if c.kind in (K.BINARY_OPERATOR, K.COMPOUND_ASSIGNMENT_OPERATOR):
                kids = list(c.get_children())
                if len(kids) == 2 and (c.kind == K.COMPOUND_ASSIGNMENT_OPERATOR or
                                       self.binop(c) == '='):
                    d = decl_of(kids[0])
                    if d is not None:
                        self.written_vars.add(d.hash)
            elif c.kind == K.UNARY_OPERATOR:
                op = self.unop(c)
                if op in ('++', '--', '&'):
                    kid = list(c.get_children())[0]
                    d = decl_of(kid)
                    if d is not None:
                        self.written_vars.add(d.hash)
            elif c.kind in (K.SWITCH_STMT, K.GOTO_STMT, K.INDIRECT_GOTO_STMT, K.LABEL_STMT):
                self.unsupported = (c, c.kind.name.lower().replace('_stmt', '').replace('_', ' '))

    def binop(self, c):
        kids = list(c.get_children())
        if len(kids) != 2 or not self.src.in_main(kids[0]):
            return None
        return self.src.tok_after(kids[0].extent.end.offset)

    def unop(self, c):
        kid = list(c.get_children())[0]
        first = self.src.tok_at(c.extent.start.offset)
        if c.extent.start.offset < kid.extent.start.offset and first is not None:
            return first
        return 'post' + (self.src.tok_after(kid.extent.end.offset) or '?')

    def stable(self, text_toks):
        """True when the identifiers of an expression are never assigned after their
        declaration in this function (so the expression keeps its value)."""
        for t in text_toks:
            if t.kind == ci.TokenKind.IDENTIFIER:
                c = t.cursor
                d = c.referenced if c is not None else None
                if d is not None and d.kind in (K.VAR_DECL, K.PARM_DECL) and \
                        d.hash in self.written_vars:
                    return False
        return True

    # ---- counted loops
    def counted_loop(self, c):
        parts, close = self.src.group(c.extent.start.offset)
        if len(parts) != 3:
            return None
        init, cond, inc = parts
        var = None
        if len(init) >= 3 and init[-2].spelling == '=' and int_value(init[-1].spelling) is not None:
            var = init[-3].spelling
            lo = int_value(init[-1].spelling)
        if var is None or len(cond) < 3 or cond[0].spelling != var or cond[1].spelling != '<':
            return None
        inc_s = words(inc)
        if inc_s not in (var + ' ++', '++ ' + var, var + ' += 1', var + ' = ' + var + ' + 1'):
            return None
        hi = cond[2:]
        if not self.stable(hi):
            return None
        body = list(c.get_children())[-1]
        for d in walk(body):
            if d.kind == K.DECL_REF_EXPR and d.spelling == var and self.assigned_in(d, body):
                return None
        return Loop(c, var, lo, words(hi), body)

    def assigned_in(self, ref, body):
        for c in walk(body):
            if c.kind in (K.BINARY_OPERATOR, K.COMPOUND_ASSIGNMENT_OPERATOR):
                kids = list(c.get_children())
                if len(kids) == 2 and (c.kind == K.COMPOUND_ASSIGNMENT_OPERATOR or
                                       self.binop(c) == '='):
                    d = strip(kids[0])
                    if d is not None and d.kind == K.DECL_REF_EXPR and d.spelling == ref.spelling:
                        return True
            elif c.kind == K.UNARY_OPERATOR and self.unop(c) in ('++', '--', 'post++', 'post--', '&'):
                d = strip(list(c.get_children())[0])
                if d is not None and d.kind == K.DECL_REF_EXPR and d.spelling == ref.spelling:
                    return True
        return False


class Buffer(object):
    """A local variable passed as the buffer of a send or receive."""

    def __init__(self, decl, role):
        self.decl = decl
        self.name = decl.spelling
        self.role = role              # 'sender' or 'receiver'
        self.fail = None              # (reason, cursor) decided before the data flow
        self.count = None             # the count text all its calls share
        self.is_array = decl.type.kind in (ci.TypeKind.CONSTANTARRAY, ci.TypeKind.VARIABLEARRAY)
        self.calls = []
        self.fits = False
        self.reason = None
        self.count_value = None       # its value when a constant

    def set_fail(self, why):
        if self.fail is None:
            self.fail = why


def meet_sender(a, b):
    if a is None:
        return b
    if b is None or a == b:
        return a
    if a[0] == FAIL:
        return a
    if b[0] == FAIL:
        return b
    s = {a[0], b[0]}
    if s in ({OPEN, CLOSED}, {OPEN, END}):
        return (OPEN, None)
    if s in ({END, CLOSED}, {EORCP, CLOSED}, {EORCP, END}):
        return (EORCP, None)
    if s == {START, END}:
        return (START, None)
    if a[0] == b[0]:
        return a
    if OPEN in s:
        return (FAIL, 'sent without a complete pack on some path (states %s and %s meet)' % (a[0], b[0]))
    return (FAIL, 'packed or sent on some paths only (states %s and %s meet)' % (a[0], b[0]))


def meet_receiver(a, b):
    if a is None:
        return b
    if b is None or a == b:
        return a
    if a[0] == FAIL:
        return a
    if b[0] == FAIL:
        return b
    s = {a[0], b[0]}
    if a[0] == b[0]:
        return a
    if UNPACK in s and s <= {UNPACK, EMPTY, DEAD, END}:
        return (UNPACK, None)
    if s <= {EMPTY, DEAD, END}:
        return (EMPTY, None)
    if s == {START, END}:
        return (START, None)
    return (FAIL, 'received on some paths only (states %s and %s meet)' % (a[0], b[0]))


def step_sender(st, e):
    s = st[0]
    k = e.kind
    at = loc(e.cursor)
    if s == FAIL:
        return st
    if k == 'FAIL':
        return (FAIL, '%s at %s' % (e.why, at))
    if k == 'NULL':
        return st if s in (END, START) else (FAIL, 'pointer cleared while in use at %s' % at)
    if k == 'FREE':
        if s in (END, START):
            return (END, None)
        return (FAIL, 'used after free at %s' % at)
    if s == START:
        if k == 'ALLOC':
            return (FAIL, 'allocated again without free at %s' % at)
        return (FAIL, 'used before its allocation at %s' % at)
    if k == 'ALLOC':
        if s in (CLOSED, EORCP, END):
            return (START, None)
        return (FAIL, 'sent without a complete pack after its allocation at %s' % at)
    if k == 'SND':
        if s == OPEN:
            return (FAIL, 'sent again without a complete pack at %s' % at)
        return (OPEN, None)
    if k == 'R':
        if s in (END, EORCP):
            return (FAIL, 'read after send at %s' % at)
        return (OPEN, None)
    if k == 'W':
        if s in (END, EORCP):
            return (FAIL, 'written after its last send at %s' % at)
        return st
    if k == 'CW':
        if s in (END, EORCP):
            return (FAIL, 'written after its last send at %s' % at)
        return (CLOSED, None)
    return (FAIL, 'unexpected operation at %s' % at)


def step_receiver(st, e):
    s = st[0]
    k = e.kind
    at = loc(e.cursor)
    if s == FAIL:
        return st
    if k == 'FAIL':
        return (FAIL, '%s at %s' % (e.why, at))
    if k == 'NULL':
        return st if s in (END, START) else (FAIL, 'pointer cleared while in use at %s' % at)
    if k == 'FREE':
        if s in (END, START):
            return (END, None)
        return (FAIL, 'used after free at %s' % at)
    if s == START:
        if k == 'ALLOC':
            return (FAIL, 'allocated again without free at %s' % at)
        return (FAIL, 'used before its allocation at %s' % at)
    if k in ('R', 'W'):
        if not e.inside:
            what = 'read' if k == 'R' else 'partial overwrite'
            return (FAIL, '%s outside the received part at %s' % (what, at))
        return (UNPACK, None)
    if k == 'RCV':
        if s == UNPACK:
            return (EMPTY, None)
        if s in (EMPTY, DEAD):
            return (DEAD, None)
        return (EMPTY, None)
    if k == 'ALLOC':
        if s in (EMPTY, DEAD, END):
            return (START, None)
        return (FAIL, 'read or written before its first receive (allocation at %s)' % at)
    return (FAIL, 'unexpected operation at %s' % at)


class Result(object):
    def __init__(self, src):
        self.src = src
        self.calls = []           # CommCall, in source order
        self.functions = []

    def messages(self):
        out = []
        for c in sorted(self.calls, key=lambda c: c.cursor.extent.start.offset):
            if c.name not in SEND_CALLS and c.name not in RECV_CALLS:
                continue
            role = 'sender' if c.name in SEND_CALLS else 'receiver'
            arg = c.args[0][0] if c.args else '?'
            where = loc(c.buf_cursor)
            if c.verdict:
                out.append("%s: note: buffer '%s' in %s fits the %s pattern" % (where, arg, c.name, role))
            else:
                out.append("%s: warning: buffer '%s' in %s does not fit the %s pattern: %s" %
                           (where, arg, c.name, role, c.reason))
        for c, why in getattr(self, 'skipped', []):
            out.append("%s: note: buffer '%s' in %s not rewritten: %s" %
                       (loc(c.buf_cursor), c.args[0][0], c.name, why))
        return out


def analyse(tu, path):
    src = Source(tu, path)
    res = Result(src)
    for fn in tu.cursor.get_children():
        if fn.kind == K.FUNCTION_DECL and fn.is_definition() and src.in_main(fn):
            f = FunctionFlow(src, fn, res)
            f.run()
            res.functions.append(f)
    return res


class FunctionFlow(Function):
    """The control flow graph, the events and the backward data flow of one function."""

    def run(self):
        self.scan_writes()
        self.entry_node = None
        self.exit_node = self.node(None, 'exit')
        self.find_calls()
        if not self.tracked:
            return
        body = [k for k in self.fn.get_children() if k.kind == K.COMPOUND_STMT]
        if self.unsupported:
            for b in self.tracked.values():
                b.set_fail('%s statement in the function at %s (not analysed)' %
                           (self.unsupported[1], loc(self.unsupported[0])))
        else:
            first = self.build(body[0], self.exit_node, None, None, ())
            self.entry_node = self.node(None, 'entry')
            self.entry_node.succs = [first]
        for b in self.tracked.values():
            self.solve(b)
        for call in self.result.calls:
            if call.var is not None and call.var.hash in self.tracked:
                b = self.tracked[call.var.hash]
                call.verdict = b.fits
                call.reason = b.reason

    def node(self, cursor, kind='stmt'):
        n = Node(cursor, kind)
        self.nodes.append(n)
        return n

    # ---- the buffers
    def find_calls(self):
        for c in walk(self.fn):
            if c.kind != K.CALL_EXPR or not self.src.in_main(c):
                continue
            name = c.spelling
            if name not in SEND_CALLS and name not in RECV_CALLS and name not in OTHER_P2P:
                continue
            parts, _ = self.src.group(c.extent.start.offset)
            call = CommCall(c, name, [(self.src.span(p), p) for p in parts])
            call.function = self
            kids = list(c.get_children())
            call.buf_cursor = kids[1] if len(kids) > 1 else c
            self.result.calls.append(call)
            if name in OTHER_P2P:
                continue
            call.role = 'sender' if name in SEND_CALLS else 'receiver'
            d = decl_of(kids[1]) if len(kids) > 1 else None
            if d is None:
                call.verdict = False
                call.reason = 'ambiguous buffer expression (not a plain variable) at %s' % loc(kids[1])
                for r in walk(kids[1]):
                    if r.kind == K.DECL_REF_EXPR:
                        call.ambiguous = True
                continue
            call.var = d
            b = self.tracked.get(d.hash)
            if b is None:
                b = self.tracked[d.hash] = Buffer(d, call.role)
            b.calls.append(call)
            if b.role != call.role:
                b.set_fail('both sent and received (only one role is analysed)')
            count = words(call.args[1][1]) if len(call.args) > 1 else None
            if b.count is None:
                b.count = count
                b.count_value = const_value(kids[2]) if len(kids) > 2 else None
            elif b.count != count:
                b.set_fail('passed with different counts (%s, %s)' % (b.count, count))
            if len(call.args) > 1 and not self.stable(call.args[1][1]):
                b.set_fail('its count %s may change' % count)
        for b in self.tracked.values():
            d = b.decl
            if d.kind == K.PARM_DECL:
                b.set_fail('comes from the caller (parameter)')
            elif d.semantic_parent is None or d.semantic_parent.kind != K.FUNCTION_DECL or \
                    d.storage_class == ci.StorageClass.STATIC:
                b.set_fail('not a local variable of the function')
            elif not b.is_array and d.type.kind != ci.TypeKind.POINTER:
                b.set_fail('neither a pointer nor an array')

    def buf(self, c):
        d = decl_of(c) if c is not None else None
        if d is not None and d.hash in self.tracked:
            return self.tracked[d.hash]
        return None

    def element(self, c):
        """(buffer, index cursor or 0) when c is b[i] or *b of a tracked buffer."""
        c = strip(c)
        if c is None:
            return None, None
        if c.kind == K.ARRAY_SUBSCRIPT_EXPR:
            base, idx = list(c.get_children())
            b = self.buf(base)
            if b is not None:
                return b, idx
        elif c.kind == K.UNARY_OPERATOR and self.unop(c) == '*':
            b = self.buf(list(c.get_children())[0])
            if b is not None:
                return b, 0
        return None, None

    def inside(self, b, idx, ctx):
        """True when the index lies provably in [0, count) of the buffer's calls."""
        n = b.count_value
        if isinstance(idx, int):
            return n is not None and n > 0
        i = strip(idx)
        if i is not None and i.kind == K.DECL_REF_EXPR:
            for lp in reversed(ctx[0]):
                if lp.var == i.spelling:
                    hv = lp.hi_value
                    return lp.lo >= 0 and (lp.hi == b.count or
                                           (hv is not None and n is not None and hv <= n))
            return False
        v = const_value(i)
        return v is not None and n is not None and 0 <= v < n

    def access(self, kind, b, idx, c, ctx, out):
        if b.decl.hash in ctx[1]:
            return
        out.append(Event(kind, b, c, inside=self.inside(b, idx, ctx)))

    # ---- events of an expression or declaration, in evaluation order
    def ev(self, c, ctx, out):
        k = c.kind
        if k == K.CALL_EXPR:
            name = c.spelling
            args = list(c.get_children())[1:]
            if name in SEND_CALLS or name in RECV_CALLS:
                for a in args[1:]:
                    self.ev(a, ctx, out)
                b = self.buf(args[0]) if args else None
                if b is not None:
                    call = [x for x in b.calls if x.cursor == c]
                    out.append(Event('SND' if name in SEND_CALLS else 'RCV', b, c,
                                     call=call[0] if call else None))
                elif args:
                    self.ev(args[0], ctx, out)
                return
            if name == 'free' and len(args) == 1 and self.buf(args[0]) is not None:
                out.append(Event('FREE', self.buf(args[0]), c))
                return
            for a in args:
                b = self.buf(a)
                if b is not None:
                    out.append(Event('FAIL', b, a, why="passed to %s()" % name))
                else:
                    self.ev(a, ctx, out)
            return
        if k == K.BINARY_OPERATOR:
            lhs, rhs = list(c.get_children())
            op = self.binop(c)
            if op == '=':
                b = self.buf(lhs)
                if b is not None:
                    self.assign(b, rhs, ctx, out)
                    return
                b, idx = self.element(lhs)
                if b is not None:
                    self.ev(rhs, ctx, out)
                    if not isinstance(idx, int):
                        self.ev(idx, ctx, out)
                    self.access('W', b, idx, lhs, ctx, out)
                    return
            elif op in ('==', '!=', '&&', '||'):
                for side in (lhs, rhs):
                    if self.buf(side) is None:
                        self.ev(side, ctx, out)
                return
            for side in (lhs, rhs):
                b = self.buf(side)
                if b is not None:
                    why = 'pointer arithmetic' if op in ('+', '-') else 'pointer used in an expression'
                    out.append(Event('FAIL', b, side, why=why))
                else:
                    self.ev(side, ctx, out)
            return
        if k == K.COMPOUND_ASSIGNMENT_OPERATOR:
            lhs, rhs = list(c.get_children())
            b, idx = self.element(lhs)
            if b is not None:
                self.ev(rhs, ctx, out)
                if not isinstance(idx, int):
                    self.ev(idx, ctx, out)
                self.access('R', b, idx, lhs, ctx, out)
                self.access('W', b, idx, lhs, ctx, out)
                return
            b = self.buf(lhs)
            if b is not None:
                out.append(Event('FAIL', b, lhs, why='pointer arithmetic'))
                self.ev(rhs, ctx, out)
                return
        if k == K.UNARY_OPERATOR:
            op = self.unop(c)
            kid = list(c.get_children())[0]
            b, idx = self.element(kid)
            if op == '&':
                b = b or self.buf(kid)
                if b is not None:
                    out.append(Event('FAIL', b, c, why='address taken'))
                    return
            elif b is not None and op in ('++', '--', 'post++', 'post--'):
                if not isinstance(idx, int):
                    self.ev(idx, ctx, out)
                self.access('R', b, idx, kid, ctx, out)
                self.access('W', b, idx, kid, ctx, out)
                return
            elif op == '*' and self.buf(kid) is not None:
                self.access('R', self.buf(kid), 0, c, ctx, out)
                return
            elif op == '!' and self.buf(kid) is not None:
                return
        if k == K.ARRAY_SUBSCRIPT_EXPR:
            base, idx = list(c.get_children())
            b = self.buf(base)
            if b is not None:
                self.ev(idx, ctx, out)
                self.access('R', b, idx, c, ctx, out)
                return
        if k == K.DECL_REF_EXPR:
            b = self.buf(c)
            if b is not None:
                out.append(Event('FAIL', b, c, why="aliased or escapes (pointer copied)"))
            return
        if k == K.CXX_UNARY_EXPR:  # sizeof, alignof: operands are not evaluated
            for r in walk(c):
                b = self.buf(r) if r.kind == K.DECL_REF_EXPR else None
                if b is not None and b.is_array:
                    out.append(Event('FAIL', b, r, why='size of the array taken'))
            return
        if k == K.VAR_DECL:
            b = self.tracked.get(c.hash)
            kids = [x for x in c.get_children() if x.kind != K.TYPE_REF]
            has_init = '=' in [t.spelling for t in c.get_tokens()]
            init = kids[-1] if has_init and kids else None
            if b is not None:
                if b.is_array:
                    out.append(Event('ALLOC', b, c))
                    if init is not None:
                        out.append(Event('FAIL', b, c, why='initialized at its declaration'))
                elif init is not None:
                    self.assign(b, init, ctx, out)
                return
            if init is not None:
                self.ev(init, ctx, out)
            return
        for kid in c.get_children():
            self.ev(kid, ctx, out)

    def assign(self, b, rhs, ctx, out):
        r = strip(rhs)
        if r is not None and r.kind == K.CALL_EXPR and r.spelling in ALLOC_CALLS:
            for a in list(r.get_children())[1:]:
                self.ev(a, ctx, out)
            out.append(Event('ALLOC', b, r))
        elif is_null(rhs):
            out.append(Event('NULL', b, rhs))
        else:
            srcs = sorted({d.spelling for d in walk(rhs) if d.kind == K.DECL_REF_EXPR
                           and d.type.kind in (ci.TypeKind.POINTER, ci.TypeKind.CONSTANTARRAY)})
            self.ev(rhs, ctx, out)
            why = 'ambiguous pointer: assigned from %s' % (' or '.join(srcs) if srcs else
                                                            'an expression other than malloc/calloc')
            out.append(Event('FAIL', b, rhs, why=why))

    # ---- complete pack loops: for (i = 0; i < count; i++) { b[i] = ...; ... b[i] ... }
    def covers(self, lp, b):
        if b.role != 'sender' or lp.lo != 0 or lp.hi != b.count or b.fail:
            return False
        refs = [d for d in walk(lp.body) if d.kind == K.DECL_REF_EXPR and self.buf(d) is b]
        subs = []
        for d in walk(lp.body):
            if d.kind == K.ARRAY_SUBSCRIPT_EXPR:
                base, idx = list(d.get_children())
                i = strip(idx)
                if self.buf(base) is b and i.kind == K.DECL_REF_EXPR and i.spelling == lp.var:
                    subs.append(d)
        if not refs or len(refs) != len(subs):
            return False
        for d in walk(lp.body):
            if d.kind in (K.BREAK_STMT, K.CONTINUE_STMT, K.RETURN_STMT, K.GOTO_STMT):
                return False
        stmts = list(lp.body.get_children()) if lp.body.kind == K.COMPOUND_STMT else [lp.body]
        for s in stmts:
            mentions = [d for d in walk(s) if d.kind == K.DECL_REF_EXPR and self.buf(d) is b]
            if not mentions:
                continue
            if s.kind != K.BINARY_OPERATOR or self.binop(s) != '=':
                return False
            lhs, rhs = list(s.get_children())
            eb, _ = self.element(lhs)
            if eb is not b:
                return False
            return not [d for d in walk(rhs) if d.kind == K.DECL_REF_EXPR and self.buf(d) is b]
        return False

    # ---- the control flow graph: build(c, succ) returns the first node of c
    def build(self, c, succ, brk, cont, ctx):
        k = c.kind
        if not ctx:
            ctx = ((), frozenset())
        if k == K.COMPOUND_STMT:
            kids = list(c.get_children())
            arrays = []
            for kid in kids:
                if kid.kind == K.DECL_STMT:
                    for v in kid.get_children():
                        b = self.tracked.get(v.hash)
                        if b is not None and b.is_array:
                            arrays.append(b)
            tail = []
            if arrays and kids and kids[-1].kind == K.RETURN_STMT:
                tail = [kids.pop()]
            for t in tail:
                succ = self.build(t, succ, brk, cont, ctx)
                self.mark(succ, t)
            if arrays:
                end = self.node(c, 'scope_end')
                end.succs = [succ]
                end.events = [Event('FREE', b, c) for b in arrays]
                end.arrays = arrays
                end.before = tail[0] if tail else None
                succ = end
                exits = [d for kid in kids for d in walk(kid)
                         if d.kind in (K.RETURN_STMT, K.BREAK_STMT, K.CONTINUE_STMT)]
                if exits:
                    for b in arrays:
                        b.set_fail('its scope is left early at %s' % loc(exits[0]))
            for kid in reversed(kids):
                succ = self.build(kid, succ, brk, cont, ctx)
                self.mark(succ, kid)
            return succ
        if k == K.IF_STMT:
            kids = list(c.get_children())
            cond = self.node(kids[0], 'cond')
            cond.stmt = c
            self.ev(kids[0], ctx, cond.events)
            cond.succs = [self.build(kids[1], succ, brk, cont, ctx),
                          self.build(kids[2], succ, brk, cont, ctx) if len(kids) > 2 else succ]
            return cond
        if k == K.WHILE_STMT:
            kids = list(c.get_children())
            cond = self.node(kids[0], 'cond')
            self.ev(kids[0], ctx, cond.events)
            cond.succs = [self.build(kids[1], cond, succ, cond, ctx), succ]
            return cond
        if k == K.DO_STMT:
            kids = list(c.get_children())
            cond = self.node(kids[1], 'cond')
            self.ev(kids[1], ctx, cond.events)
            first = self.build(kids[0], cond, succ, cond, ctx)
            cond.succs = [first, succ]
            return first
        if k == K.FOR_STMT:
            return self.build_for(c, succ, ctx)
        if k == K.RETURN_STMT:
            n = self.node(c)
            for kid in c.get_children():
                self.ev(kid, ctx, n.events)
            n.succs = [self.exit_node]
            return n
        if k in (K.BREAK_STMT, K.CONTINUE_STMT):
            n = self.node(c)
            n.succs = [brk if k == K.BREAK_STMT else cont]
            return n
        if k == K.NULL_STMT:
            return succ
        n = self.node(c)
        self.ev(c, ctx, n.events)
        n.succs = [succ]
        return n

    def mark(self, n, stmt):
        """Records that code may be inserted before n's statement (it sits in a block)."""
        if n.cursor is not None and (n.cursor == stmt or (n.stmt is not None and n.stmt == stmt)):
            n.stmt = stmt
            n.in_block = True

    def build_for(self, c, succ, ctx):
        parts, close = self.src.group(c.extent.start.offset)
        kids = list(c.get_children())
        body = kids[-1]
        head = {}
        if len(parts) == 3:
            for kid in kids[:-1]:
                off = kid.extent.start.offset
                for i, p in enumerate(parts):
                    if p and p[0].extent.start.offset <= off <= p[-1].extent.start.offset:
                        head[i] = kid
        lp = self.counted_loop(c)
        if lp is not None and 1 in head:
            lp.hi_value = const_value(list(head[1].get_children())[-1])
        packs = [b for b in self.tracked.values() if lp is not None and self.covers(lp, b)]
        inner = (ctx[0] + ((lp,) if lp else ()), ctx[1] | {b.decl.hash for b in packs})
        cond = self.node(head.get(1), 'cond')
        if 1 in head:
            self.ev(head[1], inner, cond.events)
        inc = self.node(head.get(2), 'stmt')
        if 2 in head:
            self.ev(head[2], inner, inc.events)
        inc.succs = [cond]
        cond.succs = [self.build(body, inc, succ, inc, inner), succ]
        first = cond
        if 0 in head:
            init = self.node(head[0], 'stmt')
            init.stmt = c
            self.ev(head[0], ctx, init.events)
            init.succs = [cond]
            first = init
        if packs:
            p = self.node(c, 'pack')
            p.stmt = c
            p.events = [Event('CW', b, c) for b in packs]
            p.succs = [first]
            first = p
        return first

    # ---- backward data flow to a fixpoint
    def solve(self, b):
        if b.fail:
            b.fits, b.reason = False, b.fail
            return
        sender = b.role == 'sender'
        meet = meet_sender if sender else meet_receiver
        step = step_sender if sender else step_receiver
        state = {id(self.exit_node): (END, None)}
        changed = True
        rounds = 0
        while changed and rounds < 200:
            changed = False
            rounds += 1
            for n in reversed(self.nodes):
                if n is self.exit_node:
                    continue
                out = None
                for s in n.succs:
                    out = meet(out, state.get(id(s)))
                if out is None:
                    continue
                st = out
                for e in reversed(n.events):
                    if e.var is b:
                        st = step(st, e)
                old = state.get(id(n))
                if rounds > 50 and old is not None and old[0] == FAIL and st[0] == FAIL:
                    continue  # reasons may still move; the states have settled
                if old != st:
                    state[id(n)] = st
                    changed = True
        b.states = state
        final = state.get(id(self.entry_node), (FAIL, 'not reached'))
        if changed:
            final = (FAIL, 'the analysis did not settle')
        if final[0] in (START, END):
            b.fits, b.reason = True, None
        elif final[0] == FAIL:
            b.fits, b.reason = False, final[1] or 'unknown'
        else:
            b.fits, b.reason = False, 'not allocated in this function (state %s at entry)' % final[0]
