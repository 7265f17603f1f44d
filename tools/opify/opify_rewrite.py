# opify_rewrite: the forward transformation of hmpi-opify (docs/opify.md).
# For buffers the backward analysis proved to fit, walks the same control flow graph
# forwards (states Empty, Held, Mixed) and turns allocations, sends, receives and frees
# into OPI calls by text edits at AST source ranges. Touches nothing else.

import clang.cindex as ci
import opify_analysis as an

K = ci.CursorKind
EMPTY, HELD, MIXED = 'E', 'H', 'M'


def meet(a, b):
    if a is None:
        return b
    if b is None or a == b:
        return a
    return MIXED


def tag_key(call):
    if call.name not in an.SEND_CALLS and call.name not in an.RECV_CALLS:
        return '*'
    toks = call.args[4][1] if len(call.args) > 4 else []
    if len(toks) != 1 or toks[0].spelling == 'MPI_ANY_TAG':
        return '*'
    if not call.function.stable(toks):
        return '*'
    return toks[0].spelling


class Rewriter(object):
    def __init__(self, result):
        self.res = result
        self.src = result.src
        self.edits = []          # (start, end, text, order)
        result.skipped = []

    def lenvar(self, b):
        return 'hmpi_opify_len_%s' % b.name

    def ref(self, b):
        return '(void **)&%s' % b.name

    def edit(self, start, end, text):
        self.edits.append((start, end, text, len(self.edits)))

    def indent(self, off):
        line_start = self.src.text.rfind('\n', 0, off) + 1
        pre = self.src.text[line_start:off]
        return pre if pre.strip() == '' else ' '

    def insert_before(self, stmt, code):
        off = stmt.extent.start.offset
        self.edit(off, off, code + '\n' + self.indent(off))

    def args_after_buffer(self, call):
        return ', '.join(a[0] for a in call.args[1:])

    def decl_stmt(self, f, b):
        for c in an.walk(f.fn):
            if c.kind == K.DECL_STMT:
                kids = list(c.get_children())
                if any(k == b.decl for k in kids):
                    return c, len(kids)
        return None, 0

    # ---- forward flow for one buffer: returns the node entry states, or None
    def forward(self, f, b):
        preds = {}
        for n in f.nodes:
            for s in n.succs:
                preds.setdefault(id(s), []).append(n)
        inn, out = {}, {}
        changed = True
        while changed:
            changed = False
            for n in f.nodes:
                st = EMPTY if n is f.entry_node else None
                for p in preds.get(id(n), []):
                    st = meet(st, out.get(id(p)))
                if st is None:
                    continue
                inn[id(n)] = st
                for e in n.events:
                    if e.var is not b:
                        continue
                    if e.kind in ('ALLOC', 'SND', 'FREE', 'NULL'):
                        st = EMPTY
                    elif e.kind in ('R', 'W', 'CW', 'RCV'):
                        st = HELD
                if out.get(id(n)) != st:
                    out[id(n)] = st
                    changed = True
        return inn

    def plan(self, f, b):
        """Edits for one buffer, or a reason why it cannot be rewritten."""
        inn = self.forward(f, b)
        edits = []
        ds, ndecl = self.decl_stmt(f, b)
        if ds is None:
            return None, 'declaration not found'
        elem = (b.decl.type.element_type if b.is_array else b.decl.type.get_pointee()).spelling
        sender = b.role == 'sender'
        if b.is_array:
            if ndecl != 1:
                return None, 'declared together with other variables'
            text = '%s *%s = (void *)0' % (elem, b.name)
            if sender:
                text = 'size_t %s = sizeof(%s); %s' % (self.lenvar(b), b.decl.type.spelling, text)
            edits.append((ds.extent.start.offset, ds.extent.end.offset - 1, text))
        elif sender:
            off = ds.extent.start.offset
            edits.append((off, off, 'size_t %s = 0;\n%s' % (self.lenvar(b), self.indent(off))))
        for n in f.nodes:
            st = inn.get(id(n))
            for e in n.events:
                if e.var is not b:
                    continue
                if e.kind == 'ALLOC' and not b.is_array:
                    a = [x for x in e.cursor.get_children()][1:]
                    txt = [self.text(x) for x in a]
                    if not sender:
                        size = None
                    elif e.cursor.spelling == 'malloc' and len(txt) == 1:
                        size = '(%s)' % txt[0]
                    elif len(txt) == 2:
                        size = '(size_t)(%s) * (%s)' % tuple(txt)
                    else:
                        return None, 'allocation not understood'
                    rep = '(void *)0' if size is None else '(%s = %s, (void *)0)' % (self.lenvar(b), size)
                    edits.append((e.cursor.extent.start.offset, e.cursor.extent.end.offset, rep))
                    st = EMPTY
                elif e.kind == 'ALLOC':
                    st = EMPTY
                elif e.kind in ('R', 'W', 'CW') and sender and st != HELD:
                    if n.stmt is None or not n.in_block:
                        return None, 'no statement to put OPI_Alloc before at %s' % an.loc(e.cursor)
                    code = 'OPI_Alloc(%s, %s);' % (self.ref(b), self.lenvar(b))
                    if st == MIXED:
                        code = 'if (!%s) %s' % (b.name, code)
                    off = n.stmt.extent.start.offset
                    edits.append((off, off, code + '\n' + self.indent(off)))
                    st = HELD
                elif e.kind in ('R', 'W'):
                    st = HELD
                elif e.kind == 'SND':
                    c = e.call
                    edits.append((c.cursor.extent.start.offset, c.cursor.extent.end.offset,
                                  '%s(%s, %s)' % (an.SEND_CALLS[c.name], self.ref(b),
                                                  self.args_after_buffer(c))))
                    st = EMPTY
                elif e.kind == 'RCV':
                    c = e.call
                    take = '%s(%s, %s)' % (an.RECV_CALLS[c.name], self.ref(b), self.args_after_buffer(c))
                    edits.append((c.cursor.extent.start.offset, c.cursor.extent.end.offset,
                                  self.release(b, st, take)))
                    st = HELD
                elif e.kind == 'FREE':
                    if n.kind == 'scope_end':
                        code = self.release(b, st, None)
                        if code:
                            if n.before is not None:
                                off = n.before.extent.start.offset
                                edits.append((off, off, code + ';\n' + self.indent(off)))
                            else:
                                off = n.cursor.extent.end.offset - 1
                                edits.append((off, off, '    ' + code + ';\n' + self.indent(off)))
                    else:
                        code = self.release(b, st, None) or '(void)0'
                        edits.append((e.cursor.extent.start.offset, e.cursor.extent.end.offset, code))
                    st = EMPTY
                elif e.kind == 'NULL':
                    st = EMPTY
        return edits, None

    def release(self, b, st, then):
        free = 'OPI_Free(%s)' % self.ref(b)
        if st == MIXED:
            free = '(%s ? %s : 0)' % (b.name, free)
        elif st != HELD:
            free = None
        if then is None:
            return free
        return then if free is None else '(%s, %s)' % (free, then)

    def text(self, c):
        return self.src.raw[c.extent.start.offset:c.extent.end.offset].decode()

    def run(self):
        calls = [c for c in self.res.calls]
        keys = {tag_key(c) for c in calls}
        wild = '*' in keys
        groups = {}
        for c in calls:
            groups.setdefault('*' if wild else tag_key(c), []).append(c)
        ok_calls = set()
        for key, members in groups.items():
            bad = [c for c in members if not c.verdict]
            comm = [c for c in members if len(c.args) < 6 or c.args[5][0].strip() != 'MPI_COMM_WORLD']
            if bad or comm:
                why = ('a matching call does not fit (%s at %s)' % (bad[0].name, an.loc(bad[0].cursor))
                       if bad else 'communicator other than MPI_COMM_WORLD')
                for c in members:
                    if c.verdict:
                        self.res.skipped.append((c, why))
                continue
            ok_calls.update(id(c) for c in members)
        done = set()
        for c in calls:
            if id(c) not in ok_calls or c.var is None:
                continue
            f = c.function
            b = f.tracked[c.var.hash]
            if id(b) in done:
                continue
            done.add(id(b))
            if any(id(x) not in ok_calls for x in b.calls):
                continue
            edits, why = self.plan(f, b)
            if edits is None:
                for x in b.calls:
                    self.res.skipped.append((x, why))
                continue
            for e in edits:
                self.edit(*e)
        if self.edits:
            self.add_include()
        text = self.src.raw
        for start, end, rep, _ in sorted(self.edits, key=lambda e: (e[0], e[3]), reverse=True):
            text = text[:start] + rep.encode() + text[end:]
        return text.decode()

    def add_include(self):
        t = self.src.text
        if 'hmpi.h' in t:
            return
        i = t.find('#include <mpi.h>')
        if i < 0:
            i = t.find('#include "mpi.h"')
        off = 0 if i < 0 else t.find('\n', i) + 1
        self.edit(off, off, '#include <hmpi.h>\n')


def rewrite(result):
    return Rewriter(result).run()
