"""What every rule shares: the registry, the call context, and the two merges.

A rule is a pure function ``plan(ctx) -> Plan``: it reads ``ctx.shapes`` and
``ctx.attrs`` (already checked and normalized by :func:`infer`), decides where
each input's axes land in the output (its axis map), and hands the maps to one
of two merges:

- :func:`merge_all` -- every input may stretch (numpy, bidirectional, ncnn, paddle);
- :func:`fit_into` -- the output is fixed by one operand and the others may
  only stretch into it (unidirectional, pdpd, explicit, Gemm's C, PRelu).

Both report the rightmost failing output axis as a :class:`BroadcastError`
whose fields name the two operands, their axes and dims.  Where dims are not
static (symbols, ``?``, intervals) both also record on ``ctx.constraints``
what the broadcast needs of the sizes (:mod:`bcast.core.dims`); a column of static
dims costs nothing more.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from collections.abc import Callable

from ..core._format import brief
from ..core.dims import Dim, Interval, Sym, broadcast_constraint, fit_constraint, fits_into, is_one, is_static, merge
from ..core.errors import BroadcastError, InputError
from ..core.plan import Plan
from ..core.shapes import as_shape
from ..core.validate import axes, flag, integer

__all__ = ["Attr", "Rule", "Ctx", "RULES", "MAX_RANK", "register", "get_rule", "merge_all", "fit_into",
           "check_max_rank"]


@dataclass(frozen=True)
class Attr:
    """One attribute a rule takes.

    kind: ``"int"``, ``"bool"`` (0/1 or False/True), ``"axes"`` (a list of
    ints), or ``"choice"`` (one of ``choices``).
    """

    name: str
    kind: str
    default: Any = None
    doc: str = ""
    choices: tuple = ()
    required: bool = False
    #: whether a plan lists the attribute when it has its default (``max_rank`` unset is not listed: a numpy
    #: plan's JSON stays what it was before the attribute existed)
    shown_at_default: bool = True

    @property
    def flag(self) -> str:
        """The command-line flag: ``axes_mapping`` -> ``--axes-mapping``, ``transA`` -> ``--trans-a``."""
        out = []
        for ch in self.name:
            if ch.isupper():
                out.append("-" + ch.lower())
            else:
                out.append("-" if ch == "_" else ch)
        return "--" + "".join(out)

    def normalize(self, rule: str, value: Any, *, label: str | None = None) -> Any:
        """``value`` checked and normalized; an InputError names the attribute (or ``label``: the CLI's flag)."""
        where = f"{rule}: {label or 'attribute ' + self.name}"
        if value is None:  # not given, or given as None: the default
            if self.required:
                raise InputError(f"{where} is required ({self.doc})")
            return self.default
        if self.kind == "int":
            value = integer(value, where)
            if self.choices and value not in self.choices:
                raise InputError(f"{where} must be one of {', '.join(map(str, self.choices))}, got {value}")
            return value
        if self.kind == "bool":
            return bool(flag(value, where, spelled="0 or 1 (or False/True)"))
        if self.kind == "choice":
            if isinstance(value, str) and value.lower() in self.choices:
                return value.lower()
            raise InputError(f"{where} must be one of {', '.join(self.choices)}, got {brief(value)}")
        if self.kind == "axes":
            return axes(value, where)
        raise AssertionError(self.kind)  # pragma: no cover


@dataclass(frozen=True)
class Rule:
    """A registered rule: its public name, how many inputs it takes and their
    names, its attributes, and the plan function.

    What the views say of a rule's plans, declared by the rule (the views name no rule):
    ``path``, which conversion path computes what the rule describes, said wherever the rule is
    shown; ``unplaced``, how an input axis the rule maps to no output axis is described;
    ``compare_attrs``, attributes ``compare`` gives the rule unless told otherwise;
    ``compare_hint(shapes, attrs)``, a note ``compare`` adds to the rule's row (or ``""``).
    """

    name: str
    func: Callable[[Ctx], Plan]
    operands: tuple  # input names; for a variadic rule, the names are A, B, C, ...
    min_inputs: int
    max_inputs: int | None
    attrs: tuple = ()
    summary: str = ""
    source: str = ""
    framework: str = ""
    path: str = ""
    unplaced: str = "is a trailing 1 the rule ignores"
    compare_attrs: tuple = ()
    compare_hint: Callable[[tuple, dict], str] | None = None

    def operand_names(self, n: int) -> tuple:
        if self.max_inputs is None:
            return tuple(_letters(i) for i in range(n))
        return self.operands[:n]

    def arity_text(self) -> str:
        if self.max_inputs is None:
            return f"{self.min_inputs} or more shapes"
        names = ", ".join(self.operands[: self.min_inputs])
        if self.max_inputs == self.min_inputs:
            return f"{self.min_inputs} shapes ({names})"
        return f"{self.min_inputs} to {self.max_inputs} shapes ({', '.join(self.operands)})"


def _letters(i: int) -> str:
    s = ""
    i += 1
    while i:
        i, r = divmod(i - 1, 26)
        s = chr(65 + r) + s
    return s


RULES: dict[str, Rule] = {}


def register(name, *, operands=(), min_inputs=2, max_inputs=2, attrs=(), summary="", source="", framework="",
             **shown):
    """Decorator: register ``func`` as the rule ``name`` (names are unique); ``shown``: what the views say
    of it (:class:`Rule`'s ``path``, ``unplaced``, ``compare_attrs``, ``compare_hint``)."""

    def deco(func):
        if name in RULES:
            raise RuntimeError(f"rule {name!r} registered twice")
        RULES[name] = Rule(name, func, tuple(operands), min_inputs, max_inputs, tuple(attrs), summary, source,
                           framework, **shown)
        return func

    return deco


def get_rule(name: Any) -> Rule:
    if not isinstance(name, str) or name not in RULES:
        raise InputError(f"unknown rule {brief(name)}; the rules are: {', '.join(RULES)}")
    return RULES[name]


@dataclass
class Ctx:
    """One call of a rule: the checked shapes, names and attributes."""

    rule: str
    shapes: tuple
    names: tuple
    attrs: dict
    notation: str = "numpy"
    #: per input, how many leading axes ``shapes`` has dropped (ncnn's batch): constraints name the input's own
    #: axes, and errors show the shapes as given (``given``)
    axis_offset: tuple = ()
    given: tuple = ()
    constraints: list = field(default_factory=list)
    _recorded: set = field(default_factory=set, repr=False)  # the constraints, for a constant-time "each once"

    def error(self, reason: str, *, kind: str, operands=None, **fields) -> BroadcastError:
        return BroadcastError(
            self.rule, self.given or self.shapes, self.names, reason, kind=kind, operands=operands,
            notation=self.notation, attrs=tuple(self.attrs.items()), **fields,
        )

    def dims_error(self, a: tuple[int, int], b: tuple[int, int], *, axis: int, out_rank: int, dims: tuple,
                   reason: str, maps) -> BroadcastError:
        """The error of ``a`` and ``b``, ``(input, axis)`` pairs whose ``dims`` (in that order) land on
        output axis ``axis`` of ``out_rank`` and do not broadcast (``reason``; ``maps``: the axis maps)."""
        da, db = dims
        if a[0] > b[0]:
            a, b, da, db = b, a, db, da
        return self.error(
            reason, kind="dims", operands=(a[0], b[0]), axes=(a[1], b[1]),
            from_right=axis - out_rank, dims=(da, db), alignment=tuple(maps), out_rank=out_rank,
        )

    def label(self, i: int, k: int) -> str:
        """How axis ``k`` of input ``i`` is named in a constraint: its symbol, or ``A[1]``
        (also when a rule has narrowed it to another kind of dim)."""
        d = self.shapes[i][k]
        if isinstance(d, Sym):
            return d.name
        return f"{self.names[i]}[{k + (self.axis_offset[i] if self.axis_offset else 0)}]"

    def require(self, found, a: tuple[int, int], b: tuple[int, int], *, axis: int, out_rank: int,
                dims: tuple, reason: str, maps) -> None:
        """Record the constraints ``found`` (a tuple), or raise :meth:`dims_error` (same arguments)
        when ``found`` is None: they cannot hold."""
        if found is None:
            raise self.dims_error(a, b, axis=axis, out_rank=out_rank, dims=dims, reason=reason, maps=maps)
        self.record(found)

    def record(self, found) -> None:
        """Record constraints (a tuple; each once)."""
        for c in found:
            if c not in self._recorded:
                self._recorded.add(c)
                self.constraints.append(c)

    def undecidable(self, reason: str, operands=None) -> BroadcastError:
        """An error for a case the rule cannot decide without the sizes: what it
        does depends on a size the shapes leave open."""
        return self.error(f"{reason}; give static dims there", kind="undecidable", operands=operands)

    def plan(self, shape, maps, **extra) -> Plan:
        hidden = {a.name for a in RULES[self.rule].attrs
                  if not a.shown_at_default and self.attrs.get(a.name) == a.default}
        attrs = [(k, v) for k, v in self.attrs.items() if k not in hidden]
        attrs += list(extra.items())
        return Plan.build(self.rule, self.shapes, shape, self.names, maps, attrs, self.constraints, self.notation)


#: The ``max_rank`` attribute: a framework's limit on the rank of an op's inputs and output (TFLite's ADD 6,
#: Core ML 5, NNAPI 4...).  A limit is an attribute of the rule the op broadcasts by, never a copy of the rule.
MAX_RANK = Attr("max_rank", "int", None, "the most dims an input or the output may have (a framework's limit); "
                "unset: no limit", shown_at_default=False)


def check_max_rank(ctx: Ctx, out_rank: int) -> None:
    """Refuse (kind ``rank``) an input or an output of more than ``ctx.attrs["max_rank"]`` dims."""
    limit = ctx.attrs.get("max_rank")
    if limit is None:
        return
    if limit < 0:
        raise InputError(f"{ctx.rule}: attribute max_rank must be 0 or more, got {limit}")
    for i, s in enumerate(ctx.shapes):
        if len(s) > limit:
            raise ctx.error(f"{ctx.names[i]} has rank {len(s)}, more than max_rank {limit} (the most dims "
                            "allowed here)", kind="rank")
    if out_rank > limit:  # pragma: no cover - no rule here makes an output of a higher rank than its inputs
        raise ctx.error(f"the output has rank {out_rank}, more than max_rank {limit}", kind="rank")


def right_aligned(shape, out_rank: int) -> tuple:
    """The axis map of numpy's alignment: the last axes of the output."""
    return tuple(range(out_rank - len(shape), out_rank))


def _columns(shapes, maps, out_rank):
    cols: list[list[Any]] = [[] for _ in range(out_rank)]
    for i, (s, m) in enumerate(zip(shapes, maps)):
        for k, ax in enumerate(m):
            if ax is not None:
                cols[ax].append((i, k, s[k]))
    return cols


def merge_all(ctx: Ctx, maps, out_rank: int, reason) -> tuple:
    """Symmetric merge: per output axis every placed dim must be equal or 1.

    ``reason`` is a string, or a callable ``(ax) -> str`` for a reason that
    depends on where it failed.
    """
    cols = _columns(ctx.shapes, maps, out_rank)
    out: list[Dim] = [1] * out_rank
    for ax in range(out_rank - 1, -1, -1):
        cur: Dim = 1
        who: tuple[int, int] | None = None
        for i, k, d in cols[ax]:
            m = merge(cur, d)
            if m is None:
                assert who is not None  # a dim other than 1 came before: merging into 1 never fails
                why = reason(ax) if callable(reason) else reason
                raise ctx.dims_error(who, (i, k), axis=ax, out_rank=out_rank, dims=(cur, d), reason=why, maps=maps)
            if who is None and not is_one(d):
                who = (i, k)
            cur = m
        out[ax] = cur
        if not all(is_static(d) for _, _, d in cols[ax]):
            _column_constraints(ctx, cols[ax], ax, out_rank, maps, reason)
    return tuple(out)


#: The most pairwise constraints one column of open dims may need (91 distinct symbols give 4095).
MAX_PAIRS = 4096


def _column_constraints(ctx: Ctx, col, ax, out_rank, maps, reason) -> None:
    """What one column of a symmetric merge needs: every dim that is not 1
    equals every other.  With a static dim ``c`` in the column that is
    ``X ∈ {1, c}`` for each other dim; else one constraint per pair, at most
    :data:`MAX_PAIRS` of them (more is an InputError: they would take minutes)."""
    terms, seen = [], set()
    for i, k, d in col:
        if is_one(d) or (not isinstance(d, Interval) and d in seen):  # same(d, e) for an e already there
            continue
        seen.add(d)
        terms.append((i, k, d))
    static = [t for t in terms if is_static(t[2])]
    if not static and len(terms) * (len(terms) - 1) // 2 > MAX_PAIRS:
        raise InputError(
            f"{ctx.rule}: {len(terms)} open dims (symbols, ?, intervals) meet on output axis {ax - out_rank}: "
            f"the {len(terms) * (len(terms) - 1) // 2} constraints between them are more than {MAX_PAIRS}; "
            "give some of them static sizes"
        )
    pairs = [(static[0], t) for t in terms if not is_static(t[2])] if static else [
        (terms[p], terms[q]) for p in range(len(terms)) for q in range(p + 1, len(terms))
    ]
    for (i, k, d), (j, m, e) in pairs:
        found = broadcast_constraint((ctx.label(i, k), d), (ctx.label(j, m), e))
        why = reason(ax) if callable(reason) else reason
        ctx.require(found, (i, k), (j, m), axis=ax, out_rank=out_rank, dims=(d, e), reason=why, maps=maps)


def fit_into(ctx: Ctx, maps, out_shape, owners, reason) -> tuple:
    """One-way check: every placed dim equals the output dim or is 1.

    ``owners[ax]`` is the ``(input, axis)`` that fixes output axis ``ax``;
    inputs that own axes are not checked against themselves.  Returns the
    output shape, each dim narrowed by what fits into it (``?`` that a 5
    must equal is 5); for static shapes that is ``out_shape`` itself.
    """
    out_rank = len(out_shape)
    cols = _columns(ctx.shapes, maps, out_rank)
    out = list(out_shape)
    for ax in range(out_rank - 1, -1, -1):
        t = out_shape[ax]
        owner = owners[ax]
        for i, k, d in cols[ax]:
            if owner is not None and (i, k) == owner:
                continue
            m = fits_into(d, out[ax])
            why = reason(i) if callable(reason) else reason
            if m is None:
                if owner is None:  # pragma: no cover - every rule names its owners
                    raise ctx.error(why, kind="dims", operands=(i,))
                raise ctx.dims_error(owner, (i, k), axis=ax, out_rank=out_rank, dims=(t, d), reason=why, maps=maps)
            if not (is_static(d) and is_static(out[ax])):
                found = fit_constraint((ctx.label(i, k), d), (ctx.label(*owner), out[ax]))
                ctx.require(found, owner, (i, k), axis=ax, out_rank=out_rank, dims=(t, d), reason=why, maps=maps)
            out[ax] = m
    return tuple(out)


def check_inputs(rule: Rule, shapes, names) -> tuple:
    n = len(shapes)
    if n < rule.min_inputs or (rule.max_inputs is not None and n > rule.max_inputs):
        raise InputError(f"{rule.name} takes {rule.arity_text()}, got {n}")
    shapes = tuple(as_shape(s, what=f"shape of input {i}") for i, s in enumerate(shapes))
    if names is None:
        names = rule.operand_names(n)
    else:
        if isinstance(names, (str, bytes)) or not isinstance(names, (list, tuple)):
            raise InputError(f"{rule.name}: names must be a list of strings, one per shape, got {brief(names)}")
        names = tuple(str(x) for x in names)
        for name in names:
            if len(name.splitlines()) != 1:  # "" or "a\nb": the messages name the inputs on one line
                raise InputError(f"{rule.name}: name {brief(name)} is not one line of text")
        if len(names) != n:
            raise InputError(f"{rule.name}: {len(names)} names given for {n} shapes")
    return shapes, names


def check_attrs(rule: Rule, attrs: dict) -> dict:
    known = {a.name: a for a in rule.attrs}
    for key in attrs:
        if key not in known:
            allowed = ", ".join(known) if known else "none"
            raise InputError(f"{rule.name} has no attribute {key!r} (its attributes: {allowed})")
    return {a.name: a.normalize(rule.name, attrs.get(a.name, a.default)) for a in rule.attrs}
