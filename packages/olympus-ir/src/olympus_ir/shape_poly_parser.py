"""Parsing of symbolic shape specifications (``"b, 2*c + 1"``, ``"(mod(b, 4), ...)"``).

Grammar (as JAX's): a shape is an optionally parenthesized, comma-separated list of
expressions, ``_`` (one dimension from ``like``) or a final ``...`` (the rest of ``like``).
An expression is a sum of terms; a term a product of factors, each optionally ``^ k``; a
factor an integer, a variable name, or ``floordiv|mod|max|min(e1, e2)``. Python's tokenizer
splits the string, so errors name tokens as JAX's do.
"""

from __future__ import annotations

import io
import tokenize

from .shape_poly import MAX, MIN, OPERATIONS, DimExpr, is_constant_dim, max_dim, min_dim

_FOLLOW_SHAPE = (tokenize.ENDMARKER, tokenize.RPAR)
_FOLLOW_EXPR = _FOLLOW_SHAPE + (tokenize.COMMA,)
_FOLLOW_TERM = _FOLLOW_EXPR + (tokenize.PLUS, tokenize.MINUS)


def parse_dims(spec: str, like, spec_repr: str, scope) -> tuple:
    return _Parser(spec, like, spec_repr, scope).parse()


class _Parser:
    def __init__(self, spec: str, like, spec_repr: str, scope):
        self.spec = spec
        self.like = like
        self.spec_repr = spec_repr
        self.scope = scope
        self.dims: list = []

    def parse(self) -> tuple:
        self.tokens = tokenize.tokenize(io.BytesIO(self.spec.encode("utf-8")).readline)
        tok = self.consume(self.next(), tokenize.ENCODING)
        dims, tok = self.shape(tok)
        self.expect(tok, [tokenize.ENDMARKER])
        return dims

    def error(self, tok, detail: str) -> ValueError:
        msg = (f"syntax error in symbolic shape {self.spec_repr} in dimension "
               f"{len(self.dims)}: {detail}. ")
        if tok is not None:
            msg += (f"Parsed '{tok.line[:tok.start[1]]}', "
                    f"remaining '{tok.line[tok.start[1]:]}'.")
        return ValueError(msg)

    def next(self):
        while True:
            try:
                t = next(self.tokens)
            except StopIteration:
                raise self.error(None, "unexpected end of string") from None
            if t.exact_type not in (tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT):
                return t

    def expect(self, tok, expected) -> None:
        if tok.exact_type not in expected:
            names = ", ".join(tokenize.tok_name[t] for t in expected)
            raise self.error(tok, f"expecting one of {{{names}}} but found "
                                  f"{tokenize.tok_name[tok.exact_type]}")

    def consume(self, tok, expected):
        self.expect(tok, [expected])
        return self.next()

    def integer(self, tok):
        self.expect(tok, [tokenize.NUMBER])
        try:
            v = int(tok.string)
        except ValueError:
            raise self.error(tok, f"expecting integer, found {tok.string}") from None
        return v, self.next()

    def add_dim(self, e, tok) -> None:
        if e is None:
            raise self.error(tok, "unexpected placeholder for unknown dimension; "
                                  f"like={self.like}")
        if is_constant_dim(e) and self.like is not None:
            if e != self.like[len(self.dims)]:
                raise self.error(tok, f"different size {e} for known dimension; "
                                      f"like={self.like}")
        self.dims.append(e)

    def shape(self, tok):
        if tok.exact_type == tokenize.LPAR:
            dims, tok = self.shape(self.next())
            return dims, self.consume(tok, tokenize.RPAR)
        while tok.exact_type not in _FOLLOW_SHAPE:
            ellipsis = tok.exact_type == tokenize.ELLIPSIS
            placeholder = tok.exact_type == tokenize.NAME and tok.string == "_"
            if ellipsis or placeholder:
                if self.like is None:
                    raise self.error(tok, "spec contains ... but no 'like' shape was given")
                need = len(self.dims) + (0 if ellipsis else 1)
                if len(self.like) < need:
                    raise self.error(
                        tok, f"cannot resolve placeholder '{tok.string}' because we parsed "
                             f"{len(self.dims)} already and 'like' shape has only "
                             f"{len(self.like)} dimensions")
            if ellipsis:
                for d in self.like[len(self.dims):]:
                    self.add_dim(d, tok)
                tok = self.next()
                break
            if placeholder:
                e = self.like[len(self.dims)]
                tok = self.next()
            else:
                e, tok = self.expr(tok)
            self.add_dim(e, tok)
            if tok.exact_type in _FOLLOW_SHAPE:
                break
            tok = self.consume(tok, tokenize.COMMA)
        return tuple(self.dims), tok

    def expr(self, tok):
        negate = tok.exact_type == tokenize.MINUS
        if negate or tok.exact_type == tokenize.PLUS:
            tok = self.next()
        acc = None
        while True:
            t, tok = self.term(tok)
            t = -t if negate else t
            acc = t if acc is None else acc + t
            if tok.exact_type in _FOLLOW_EXPR:
                return acc, tok
            negate = tok.exact_type == tokenize.MINUS
            self.expect(tok, [tokenize.PLUS, tokenize.MINUS])
            tok = self.next()

    def term(self, tok):
        acc = None
        while True:
            f, tok = self.factor(tok)
            if tok.exact_type == tokenize.CIRCUMFLEX:
                tok = self.next()
                self.expect(tok, [tokenize.NUMBER])
                power, tok = self.integer(tok)
                f = f ** power
            acc = f if acc is None else acc * f
            if tok.exact_type in _FOLLOW_TERM:
                return acc, tok
            tok = self.consume(tok, tokenize.STAR)

    def factor(self, tok):
        if tok.exact_type == tokenize.NAME:
            if tok.string in OPERATIONS:
                return self.operation(tok.string, self.next())
            return DimExpr.var(tok.string, self.scope), self.next()
        sign = 1
        if tok.exact_type == tokenize.MINUS:
            sign = -1
            tok = self.next()
            self.expect(tok, [tokenize.NUMBER])
        if tok.exact_type == tokenize.NUMBER:
            v, tok = self.integer(tok)
            return v * sign, tok
        self.expect(tok, [tokenize.NAME, tokenize.MINUS, tokenize.NUMBER])
        raise AssertionError("unreachable")

    def operation(self, op: str, tok):
        tok = self.consume(tok, tokenize.LPAR)
        e1, tok = self.expr(tok)
        tok = self.consume(tok, tokenize.COMMA)
        e2, tok = self.expr(tok)
        tok = self.consume(tok, tokenize.RPAR)
        if op == MAX:
            return max_dim(e1, e2), tok
        if op == MIN:
            return min_dim(e1, e2), tok
        return DimExpr.operation(op, e1, e2, scope=self.scope), tok
