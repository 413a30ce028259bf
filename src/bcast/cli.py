"""The ``bcast`` command line.

One convention for every command (README "Commands"):

- stdout carries the command's answer, whatever it is: the shape, table, recipe, report
  or JSON, and when the answer is no (not broadcastable, no recipe, findings,
  unexplained disagreements) the reason: exit status 0 for yes, 1 for no;
- stderr carries only what is wrong with the invocation (a bad shape, option or file):
  exactly one line ``bcast COMMAND: error: MESSAGE`` (``bcast: error:`` before a command),
  nothing on stdout, exit status 2, never a traceback.  ``note:`` lines on stderr say
  what a command did on the side (a deviation a recipe avoided).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import sys
import threading
from collections.abc import Sequence
from typing import TextIO

from . import __version__
from .core._format import format_shape, lookup_notation
from .frameworks.deviations import DEVIATIONS, notes_for
from .core.errors import BroadcastError, InputError
from .views.explain import explain_error, explain_plan
from .views.comparison import compare, compare_ops
from .core.dims import json_shape
from .frameworks import framework
from .frameworks import names as framework_names
from .frameworks import plan as plan_op
from .frameworks import op_name, part, takes_sizes, targets
from .rules import POLICIES, RULES, get_rule, infer
from .core.shapes import parse_shape
from ._cli_help import (EPILOG_COMPARE, EPILOG_CONFORMANCE, EPILOG_DEVIATIONS, EPILOG_EXPLAIN, EPILOG_LINT,
                        EPILOG_REWRITE, EPILOG_RULES, EPILOG_SHAPE, EPILOG_TRANSLATE, SHAPES_HELP, _Formatter, one_line)

EXIT_OK, EXIT_NOT_BROADCASTABLE, EXIT_USAGE = 0, 1, 2
_RECORDS = {d.id: d for d in DEVIATIONS}

#: The targets of ``bcast lint`` and ``bcast rewrite``, as the framework packages declare them (the same as
#: bcast.models.lint.TARGETS, bcast.models.rewrite.TARGETS: those modules import onnx, which the command line
#: loads only when it runs them).
LINT_TARGETS = tuple(targets("lint"))
REWRITE_TARGETS = tuple(targets("rewrite"))


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, exit 2
        self.exit(EXIT_USAGE, one_line(f"{self.prog}: error: {message} (see {self.prog} --help)") + "\n")


def _add_attr_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("rule attributes")
    g.add_argument("--axis", type=int,
                   help="start axis (pdpd, paddle, onnx-legacy, openvino-select, openvino-broadcast-pdpd)")
    g.add_argument("--axes-mapping", metavar="AXES", help="explicit: output axis of each data axis, e.g. 1,2")
    g.add_argument("--transpose", action="store_true", help="explicit: axes_mapping unique in any order, a "
                   "transposing broadcast (StableHLO's broadcast_in_dim)")
    g.add_argument("--broadcast", type=int, choices=(0, 1), help="onnx-legacy: the broadcast attribute")
    g.add_argument("--ncnn-order", action="store_true", help="shapes are in ncnn's [w,h,d,c] order")
    g.add_argument("--ncnn-batch", choices=("keep", "drop"),
                   help="ncnn: keep (default) reads every axis as an ncnn axis; drop reads axis 0 of the "
                   "highest-rank inputs as the batch of 1 a converter (onnx2ncnn, pnnx) drops")
    g.add_argument("--auto-broadcast", choices=("numpy", "pdpd", "none"),
                   help="openvino-select: the auto_broadcast mode")
    g.add_argument("--trans-a", action="store_true", help="onnx-gemm: transA=1")
    g.add_argument("--trans-b", action="store_true", help="onnx-gemm: transB=1")
    g.add_argument("--broadcast-dimensions", metavar="AXES", help="--framework stablehlo/jax, broadcast_in_dim: "
                   "the result axis of each operand axis, e.g. 2,1")
    g.add_argument("--rank-promotion", choices=("allow", "warn", "raise"),
                   help="--framework jax, jnp ops: jax_numpy_rank_promotion (default allow)")
    g.add_argument("--max-rank", type=int, metavar="N",
                   help="numpy, equal-rank, unidirectional, paddle: the most dims an input may have (a "
                   "framework's limit)")


def _add_framework_options(p: argparse.ArgumentParser, *, compare: bool = False) -> None:
    g = p.add_argument_group("by framework and op (instead of --rule)")
    g.add_argument("--framework", choices=framework_names(), metavar="NAME", help="the framework whose op to "
                   + ("compare (every op of it, or --op's)" if compare else "plan (with --op)")
                   + ": " + ", ".join(framework_names()))
    g.add_argument("--op", metavar="OP", help="the framework's op (Add, ADD, Select...), which picks the rule; "
                   "a bad name lists the framework's ops")
    g.add_argument("--opset", type=int, metavar="N", help="onnx: the opset (default the newest)")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="bcast",
        description="How every major ML framework broadcasts tensors: the result shape or the precise reason "
        "there is none, the alignment, and where runtimes deviate from their specs.",
        epilog="run 'bcast COMMAND --help' for examples. " + SHAPES_HELP + "\nexit status: 0 yes / ok, 1 no "
        "(not broadcastable, no recipe, findings: the reason on stdout), 2 bad input (one line on stderr)",
        formatter_class=_Formatter,
    )
    parser.add_argument("--version", action="version", version=f"bcast {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    for name, help_text, epilog in (
        ("shape", "the result shape under one rule", EPILOG_SHAPE),
        ("explain", "aligned table, verdict, reason and runtime deviations under one rule", EPILOG_EXPLAIN),
    ):
        p = sub.add_parser(name, help=help_text, description=help_text, epilog=epilog,
                           formatter_class=_Formatter)
        p.add_argument("shapes", nargs="+", metavar="SHAPE", help=SHAPES_HELP)
        p.add_argument("--rule", metavar="RULE", help="one of: " + ", ".join(RULES) + " (default numpy)")
        _add_framework_options(p)
        p.add_argument("--names", metavar="A,B", help="names for the inputs in messages")
        p.add_argument("--policy", default="permissive", choices=POLICIES,
                       help="for symbolic, unknown and interval dims: permissive (default, as ONNX: broadcast when "
                       "some sizes work, and list the constraints) or strict (refuse what the shapes do not prove)")
        _add_attr_options(p)
        p.add_argument("--json", action="store_true", help="print JSON")

    p = sub.add_parser("compare", help="every rule side by side, with the runtime deviations that apply",
                       description="Every rule side by side for the same shapes (the main job).",
                       epilog=EPILOG_COMPARE, formatter_class=_Formatter)
    p.add_argument("shapes", nargs="+", metavar="SHAPE", help=SHAPES_HELP)
    _add_framework_options(p, compare=True)
    _add_attr_options(p)
    p.add_argument("--json", action="store_true", help="print JSON")

    p = sub.add_parser("translate", help="one rule's broadcast as another framework's explicit ops",
                       description="The minimal explicit recipe (Reshape / Unsqueeze / Expand + the op) that makes "
                       "the target compute what the rule computes, or the reason there is none.",
                       epilog=EPILOG_TRANSLATE, formatter_class=_Formatter)
    p.add_argument("shapes", nargs="+", metavar="SHAPE", help=SHAPES_HELP)
    p.add_argument("--rule", default="numpy", metavar="RULE", help="the source rule, one of: " + ", ".join(RULES)
                   + " (default numpy)")
    p.add_argument("--to", required=True, choices=("numpy", *framework_names()), metavar="TARGET",
                   help="the target: numpy or a framework (those without recipes say so)")
    p.add_argument("--op", metavar="NAME", help="the op (Add, Sub, Mul, Div, Max, Min, Pow, Where; any "
                   "framework's name); default Add, or the rule's own op")
    _add_attr_options(p)
    p.add_argument("--json", action="store_true", help="print JSON")

    p = sub.add_parser("lint", help="check every broadcasting node of a model (ONNX, OpenVINO IR) for a target",
                       description="Check every broadcasting node of an ONNX model: invalid under its own spec, "
                       "valid only for some sizes of its symbolic dims, or computed differently (or not at all) by "
                       "the target, or run through a kernel that computes other values on some inputs. Every graph "
                       "is checked: If/Loop/Scan bodies and each call of a local function. Needs the onnx package "
                       "(for ONNX models). "
                       "An OpenVINO IR (MODEL.xml, its .bin beside it) is checked node by node under each node's "
                       "own auto_broadcast/axis/mode and OpenVINO's deviations, with the shapes of OpenVINO's reader "
                       "where openvino is installed, else of the .xml (numpy alone). An ncnn MODEL.param (its .bin "
                       "beside it, --input its Input shapes) is checked BinaryOp by BinaryOp under ncnn's rule, with "
                       "the blob shapes of ncnn's own run where ncnn is installed, else of the file's hints or of the "
                       "plain layers (unknown otherwise; numpy alone). A MODEL.tflite is checked operator by "
                       "operator under its kernel's rule (numpy alone).",
                       epilog=EPILOG_LINT, formatter_class=_Formatter)
    p.add_argument("model", metavar="MODEL", help="the model to check: MODEL.onnx, an OpenVINO IR MODEL.xml, an "
                   "ncnn MODEL.param (its .bin beside it), or a TFLite MODEL.tflite")
    p.add_argument("--input", action="append", metavar="NAME=SHAPE", help="a .param's Input blob shape, numpy "
                   "order as ncnn.Mat(ndarray) reads it (in0=1,3,224,224); repeat for each Input")
    p.add_argument("--target", choices=LINT_TARGETS, metavar="TARGET",
                   help="the conversion path: onnx (the spec, onnxruntime), ncnn (pnnx -> ncnn), onnx2ncnn (the "
                   "legacy converter -> ncnn), openvino (its ONNX frontend, CPU plugin), tensorrt (the ONNX-TensorRT "
                   "parser), tflite (a converter's builtins, LiteRT's kernels), onnx2tf (those, and onnx2tf's own "
                   "NHWC transpositions of constants), coreml (MIL, rank <= 5), tosa "
                   "(onnx-mlir, level 8K), webnn, nnapi (their op tables); default onnx (openvino, the only one, "
                   "for an IR)")
    p.add_argument("--layout", metavar="FROM:TO",
                   help="a layout change the converter makes to the activations and not to the constants "
                   "(NCHW:NHWC; several joined by commas, one per rank; channels-last: "
                   "NCW:NWC,NCHW:NHWC,NCDHW:NDHWC): every broadcast it breaks is a finding, with the permuted "
                   "shape the constant needs (ONNX models only)")
    p.add_argument("--bin", metavar="PATH", help="an IR's weights (default: MODEL.bin beside MODEL.xml)")
    p.add_argument("--json", action="store_true", help="print JSON")

    p = sub.add_parser("rewrite", help="rewrite an ONNX model so that a target computes its broadcasts as specified",
                       description="Rewrite an ONNX model: --target onnx upgrades the opset 1-6 broadcast/axis ops "
                       "to opset 7; --target onnx2ncnn reshapes the operands of the nodes lint flags (initializers "
                       "folded, computed ones by a Reshape); --target ncnn rewrites what pnnx converts wrong (Pow, "
                       "PRelu's slope); --target openvino gives the inputs OpenVINO aligns otherwise the output's "
                       "rank; --target tensorrt, tosa and onnx2tf give every input of every broadcasting node its "
                       "output's rank (equal ranks, onnxruntime's outputs unchanged bit for bit; onnx2tf then "
                       "transposes a (1,C,1,1) constant itself). "
                       "Every graph is rewritten: If/Loop/Scan bodies too. Needs the onnx package.",
                       epilog=EPILOG_REWRITE, formatter_class=_Formatter)
    p.add_argument("model", metavar="MODEL.onnx", help="the ONNX model to rewrite (never written)")
    p.add_argument("--target", required=True, choices=REWRITE_TARGETS,
                   help="onnx: upgrade opset 1-6 broadcast/axis ops to opset 7; onnx2ncnn: the flagged nodes' operands "
                   "reshaped (initializers folded); ncnn: what pnnx converts wrong (Pow, PRelu's slope); openvino: the "
                   "inputs OpenVINO aligns otherwise; tensorrt, tosa: every input at its output's rank (initializers "
                   "folded, others by an Unsqueeze)")
    p.add_argument("-o", "--output", required=True, metavar="OUT.onnx", help="the new model (never MODEL itself)")
    p.add_argument("--force", action="store_true", help="overwrite OUT.onnx if it exists")
    p.add_argument("--json", action="store_true", help="print JSON")

    p = sub.add_parser("conformance", help="bcast against every installed runtime: the matrix of rules x runtimes",
                       description="Run the case matrix (the seed examples and random cases) through bcast and "
                       "every installed runtime; list every disagreement and the deviation record that explains it.",
                       epilog=EPILOG_CONFORMANCE, formatter_class=_Formatter)
    p.add_argument("--runtimes", metavar="R,R", help="onnxruntime, reference, openvino, ncnn (default: all installed)")
    p.add_argument("--rules", metavar="R,R", help="rules to check (default: all)")
    p.add_argument("--cases", type=int, default=24, metavar="N", help="random cases per rule (default 24)")
    p.add_argument("--seed", type=int, default=0, help="seed of the random cases (default 0)")
    p.add_argument("--html", metavar="FILE", help="also write the report as one self-contained HTML page")
    p.add_argument("--allow-missing", action="store_true",
                   help="a runtime that is not installed is skipped, not a failure, even when that leaves nothing "
                   "checked (without it, a run that checks nothing, or misses a runtime named in --runtimes, exits 1)")
    p.add_argument("--json", action="store_true", help="print JSON")

    p = sub.add_parser("rules", help="list the rules, their inputs and attributes",
                       description="List every rule: what it is, how many inputs it takes, its options (the "
                       "command-line flags of its attributes) and the spec or source it follows.",
                       epilog=EPILOG_RULES, formatter_class=_Formatter)
    p.add_argument("--json", action="store_true", help="print JSON")
    p = sub.add_parser("deviations", help="list the registry of runtime deviations from the specs",
                       description="List the registry of runtime deviations from the specs: per record the "
                       "runtime, the versions it was proven on, the rules and ops, when it happens, what the "
                       "runtime does, what the spec says, and its proof. With --check, run every record's proof "
                       "against the installed runtimes instead.",
                       epilog=EPILOG_DEVIATIONS, formatter_class=_Formatter)
    p.add_argument("--check", action="store_true",
                   help="run every record's proof on the installed runtimes and print the drift table")
    p.add_argument("--json", action="store_true", help="print JSON")
    return parser


def _attrs_from(args) -> dict:
    attrs = {}
    if args.axis is not None:
        attrs["axis"] = args.axis
    if args.axes_mapping is not None:
        attrs["axes_mapping"] = args.axes_mapping
    if args.transpose:
        attrs["transpose"] = True
    if args.broadcast is not None:
        attrs["broadcast"] = args.broadcast
    if args.ncnn_order:
        attrs["ncnn_order"] = True
    if args.ncnn_batch is not None:
        attrs["ncnn_batch"] = args.ncnn_batch
    if args.auto_broadcast is not None:
        attrs["auto_broadcast"] = args.auto_broadcast
    if args.trans_a:
        attrs["transA"] = True
    if args.trans_b:
        attrs["transB"] = True
    if args.broadcast_dimensions is not None:
        attrs["broadcast_dimensions"] = args.broadcast_dimensions
    if args.rank_promotion is not None:
        attrs["rank_promotion"] = args.rank_promotion
    if args.max_rank is not None:
        attrs["max_rank"] = args.max_rank
    return attrs


def _rule_attrs(args) -> dict:
    """The rule attributes the options give, checked against ``--rule`` in the flags' own names
    (``--trans-a does not apply to rule numpy``, not the Python attribute ``transA``)."""
    attrs = _attrs_from(args)
    rule = get_rule(args.rule or "numpy")
    known = {a.name: a for a in rule.attrs}
    extra = [_flag(k) for k in attrs if k not in known]
    if extra:
        takes = ", ".join(a.flag for a in rule.attrs) or "none"
        raise InputError(f"{', '.join(extra)} {'does' if len(extra) == 1 else 'do'} not apply to rule {rule.name} "
                         f"(its options: {takes})")
    for a in rule.attrs:
        if a.name in attrs or a.required:
            a.normalize(rule.name, attrs.get(a.name), label=a.flag)
    return attrs


def _flag(attr: str) -> str:
    from .rules import Attr

    return Attr(attr, "int").flag


def _error_json(rule: str, shapes, err: BroadcastError) -> dict:
    return {
        "rule": rule,
        "attrs": {k: (list(v) if isinstance(v, tuple) else v) for k, v in err.attrs},
        "inputs": [json_shape(s) for s in shapes],
        "names": list(err.names),
        "ok": False,
        "shape": None,
        "error": err.to_dict(),
    }


def _framework_attrs(args) -> dict:
    """The attributes the options give to ``--framework``'s op (``--op`` checked; ``--rule``, ``--names``
    and ``--policy strict`` refused: the op picks its rule and names its inputs)."""
    if args.op is None:
        ops = ", ".join(framework(args.framework).ops())
        raise InputError(f"--framework {args.framework} needs --op, one of: {ops}")
    for flag, given in (("--rule", getattr(args, "rule", None) is not None),
                        ("--names", getattr(args, "names", None) is not None),
                        ("--policy strict", getattr(args, "policy", "permissive") != "permissive")):
        if given:
            raise InputError(f"{flag} does not apply with --framework (the op picks its rule and names its inputs)")
    return {**_attrs_from(args), **_opset(args)}


def _opset(args) -> dict:
    return {} if args.opset is None else {"opset": args.opset}


def _by_framework(args) -> dict | None:
    """``{"framework", "op"}`` when the command is asked by framework and op, else None
    (``--op`` or ``--opset`` without ``--framework`` is an InputError)."""
    if args.framework is None:
        for flag, value in (("--op", args.op), ("--opset", args.opset)):
            if value is not None:
                raise InputError(f"{flag} needs --framework, one of: {', '.join(framework_names())}")
        return None
    return {"framework": args.framework, "op": args.op}


def _keep_for(name: str | None):
    """Which deviation notes an answer by framework ``name``'s op shows: the records of its own runtimes (its
    deviations' ``RUNTIME`` enum; none for a framework with no records), as ``compare --framework`` does; by
    rule (None): every record."""
    if name is None:
        return lambda f: True
    records = part(name, "deviations")
    runtime = None if records is None else records.RUNTIME
    return lambda f: runtime is not None and isinstance(f.deviation.runtime, runtime)


def _cmd_shape_or_explain(args, out) -> int:
    sizes = args.framework is not None and args.op is not None and takes_sizes(args.framework, args.op)
    shapes = [parse_shape(s, minus_one=sizes and i == 1) for i, s in enumerate(args.shapes)]
    names = None if args.names is None else [n.strip() for n in args.names.split(",")]
    asked = _by_framework(args)
    keep = _keep_for(None if asked is None else args.framework)
    attrs = _rule_attrs(args) if asked is None else _framework_attrs(args)
    op = None if asked is None else op_name(args.framework, args.op)  # the records about that op bear too
    try:
        if asked is None:
            plan = infer(*shapes, rule=args.rule or "numpy", names=names, policy=args.policy, **attrs)
        else:
            given = [s[::-1] for s in shapes] if attrs.get("ncnn_order") else shapes  # the op takes numpy order
            plan = plan_op(args.framework, args.op, *given, **attrs)
    except BroadcastError as err:
        if args.json:  # the keys of a plan's JSON, null where there is no plan
            d = _error_json(err.rule, shapes, err)
            d.update(asked or {})
            d.update({"axis_maps": None, "stretched": None, "constraints": None})
            d["deviations"] = [f.to_dict() for f in notes_for(err, op) if keep(f)]
            print(json.dumps(d, indent=2), file=out)
        elif args.command == "explain":
            print(explain_error(err, keep=keep, op=op), file=out)
        else:
            print(err, file=out)
        return EXIT_NOT_BROADCASTABLE
    n = lookup_notation(plan.notation)
    if args.json:
        d = plan.to_dict()
        d.update(asked or {})
        if asked is None or n is not None:  # as written (ncnn order stays so); by op the plan's, as its names
            d["inputs"] = [json_shape(s) for s in shapes]  # (torch's expand plans (size, self), -1 resolved)
        if n is not None:  # the shape as written too, and the numpy-order shapes beside
            d["shape"] = json_shape(n.reorder(plan.shape))
            d["numpy"] = {"inputs": [json_shape(s) for s in plan.inputs], "shape": json_shape(plan.shape)}
            del d[n.name]
        d["deviations"] = [f.to_dict() for f in notes_for(plan, op) if keep(f)]
        print(json.dumps(d, indent=2), file=out)
    elif args.command == "explain":
        print(explain_plan(plan, keep=keep, op=op), file=out)
    else:
        print(format_shape(plan.shape) if n is None else n.shape(plan.shape), file=out)
        for c in plan.constraints:
            print(f"if {c}", file=out)
    return EXIT_OK


def _cmd_translate(args, out) -> int:
    from .translation.search import TranslationError, translate

    shapes = [parse_shape(s) for s in args.shapes]
    try:
        recipe = translate(infer(*shapes, rule=args.rule, **_rule_attrs(args)), to=args.to, op=args.op)
    except (BroadcastError, TranslationError) as err:
        if args.json:
            print(json.dumps(_translate_error_json(args, shapes, err), indent=2), file=out)
        else:
            print(err, file=out)
        return EXIT_NOT_BROADCASTABLE
    if args.json:
        d = recipe.to_dict()
        d["inputs"] = [json_shape(s) for s in shapes]  # as written
        print(json.dumps(d, indent=2), file=out)
        return EXIT_OK
    print(recipe.text(), file=out)
    for c in recipe.plan.constraints:  # what the recipe rests on, as `bcast shape` says it
        print(f"if {c}", file=out)
    for f in recipe.avoided:
        print(f"note: avoided {f.deviation.id}: {f.note}", file=sys.stderr)
    return EXIT_OK


def _translate_error_json(args, shapes, err) -> dict:
    """``bcast translate --json`` when there is no recipe: the source's error, or the target's reason."""
    if isinstance(err, BroadcastError):
        d = _error_json(args.rule, shapes, err)
    else:
        plan = infer(*shapes, rule=args.rule, **_attrs_from(args))
        d = {"rule": plan.rule, "attrs": plan.to_dict()["attrs"], "inputs": [json_shape(s) for s in shapes],
             "names": list(plan.names), "ok": False, "shape": json_shape(plan.shape),
             "constraints": [str(c) for c in plan.constraints], "error": err.to_dict()}
    d.setdefault("constraints", None)  # not broadcastable: no plan, so nothing it rests on
    d.update({"target": args.to, "op": args.op, "feeds": None, "output": None, "steps": None, "text": None,
              "avoided": []})
    return d


def _cmd_compare(args, out) -> int:
    shapes = [parse_shape(s) for s in args.shapes]
    if _by_framework(args) is None:
        data = compare(*shapes, **_attrs_from(args))
    else:  # one row per op of the framework (or --op's)
        attrs = _framework_attrs(args) if args.op is not None else {**_attrs_from(args), **_opset(args)}
        if attrs.get("ncnn_order"):
            shapes = [s[::-1] for s in shapes]  # each op takes numpy order
        data = compare_ops(args.framework, *shapes, op=args.op, **attrs)
    if args.json:
        print(json.dumps(data, indent=2), file=out)
    else:
        ins = ", ".join(f"{chr(65 + i)} {format_shape(s)}" for i, s in enumerate(data["inputs"]))
        note = " (numpy order)" if args.ncnn_order else ""
        print(f"{ins}{note}\n", file=out)
        _print_rows(data["rules"], out)
        if data.get("frameworks"):
            print(file=out)
            _print_rows(data["frameworks"], out, head="framework")
        for name in dict.fromkeys(row["rule"] for row in data["rules"] if row["ok"] is not None):
            if RULES[name].path:  # what the rule describes, said wherever it is shown
                print(f"\n{name}: {RULES[name].path}", file=out)
        if data["deviations"]:
            print("\nruntimes that deviate from the spec here:", file=out)
            for f in data["deviations"]:
                label = _RECORDS[f["id"]].label()
                who = f"{', '.join(f['ops'])} ({f['rule']})" if "ops" in f else f["rule"]
                who = f"{f['framework']} {who}" if "framework" in f else who
                print(f"  - {who}: {label} [{f['id']}]: {f['note']}", file=out)
    return EXIT_OK


def _print_rows(rows: list, out, *, head: str = "rule") -> None:
    """The rows of ``compare``/``compare_ops`` as a table: label, result, why (``head="framework"``: each row
    labelled by its framework and op)."""
    labels = []
    for row in rows:
        shown = ", ".join(f"{k}={v}" for k, v in row["attrs"].items() if v is not None and v is not False)
        if head == "framework":
            label = f"{row['framework']} {row['op']} ({row['rule'] or 'n/a'})"
        else:
            label = row["rule"] if "op" not in row else f"{row['op']} ({row['rule'] or 'n/a'})"
        labels.append(label + (f" [{shown}]" if shown else ""))
    lw = max(len(s) for s in labels + [head])
    results = [format_shape(r["shape"]) if r["ok"] else ("n/a" if r["ok"] is None else "error") for r in rows]
    rw = max(len(s) for s in results + ["result"])
    print(f"{head.ljust(lw)}  {'result'.ljust(rw)}  why", file=out)
    for label, res, row in zip(labels, results, rows):
        why = row["note"] or ""
        if row["ok"] is None:
            why = why[len("n/a: "):]
        print(f"{label.ljust(lw)}  {res.ljust(rw)}  {why}".rstrip(), file=out)


def _cmd_conformance(args, out) -> int:
    from .core._require import require

    if args.cases:  # --cases 0, the seed examples only, draws nothing
        require("hypothesis", "bcast conformance (its random cases; --cases 0 runs without)")
    from .conformance import matrix as conformance
    from .conformance.html import check_html_path, write_html

    def names(text, flag):
        if text is None:
            return None
        out = [n.strip() for n in text.split(",") if n.strip()]
        if not out:
            raise InputError(f"{flag} {text!r} names nothing: give one name or more, comma-separated")
        return out

    if args.html is not None:
        check_html_path(args.html)  # before the run, not after it
    report = conformance.run(rules=names(args.rules, "--rules"), runtimes=names(args.runtimes, "--runtimes"),
                             cases=args.cases, seed=args.seed, allow_missing=args.allow_missing)
    if args.html is not None:
        write_html(report, args.html)
    if args.json:
        print(json.dumps(report, indent=2), file=out)
    else:
        print(conformance.format_text(report), file=out)
    return EXIT_OK if report["ok"] else EXIT_NOT_BROADCASTABLE


def _cmd_rules(args, out) -> int:
    if args.json:
        print(json.dumps([
            {"rule": r.name, "inputs": r.arity_text(), "attrs": [a.name for a in r.attrs],
             "framework": r.framework, "summary": r.summary, "source": r.source}
            for r in RULES.values()
        ], indent=2), file=out)
        return EXIT_OK
    for r in RULES.values():
        attrs = " ".join(f"{a.flag}" for a in r.attrs)
        print(f"{r.name}: {r.summary}", file=out)
        print(f"    inputs: {r.arity_text()}" + (f"; options: {attrs}" if attrs else ""), file=out)
        print(f"    source: {r.source}", file=out)
    return EXIT_OK


def _cmd_deviations(args, out) -> int:
    from .conformance.drift import proof_name

    if args.check:
        return _cmd_deviations_check(args, out)
    if args.json:
        print(json.dumps([{**d.to_dict(), "proof": proof_name(d.id)} for d in DEVIATIONS], indent=2), file=out)
        return EXIT_OK
    for d in DEVIATIONS:
        fixed = f"; fixed in {d.fixed_in}" if d.fixed_in else ""
        print(f"{d.id} ({d.runtime}, proven on {', '.join(d.proven_on)}{fixed}; rules: {', '.join(d.rules)})",
              file=out)
        if d.drift():
            print(f"    installed: {d.installed} (not proven on it: bcast deviations --check)", file=out)
        print(f"    ops: {d.ops}", file=out)
        print(f"    when: {d.condition}", file=out)
        print(f"    does: {d.behaviour}", file=out)
        print(f"    spec: {d.spec}", file=out)
        print(f"    proven by: {proof_name(d.id)}", file=out)
    return EXIT_OK


def _cmd_deviations_check(args, out) -> int:
    from .conformance import drift as proofs

    verdicts = proofs.check()
    code = proofs.exit_status(verdicts)
    if args.json:
        print(json.dumps({"ok": code == EXIT_OK, "records": [v.to_dict() for v in verdicts]}, indent=2), file=out)
    else:
        print(proofs.format_table(verdicts), file=out)
    return code


def _count(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def _cmd_lint(args, out) -> int:
    from .models.findings import Report, format_finding

    ext = os.path.splitext(args.model.lower())[1]
    kind = {".xml": "an OpenVINO IR", ".param": "an ncnn .param", ".tflite": "a .tflite model"}.get(ext)
    if kind and args.layout is not None:
        raise InputError(f"--layout: a layout change is checked on an ONNX model (the converter's input), "
                         f"not on {kind}")
    if args.input and ext != ".param":
        raise InputError("--input gives the Input shapes of an ncnn .param; every other format declares its own")
    if args.bin is not None and ext != ".xml":
        raise InputError("--bin: the weights of an OpenVINO IR (MODEL.xml); an ONNX model's external data lie "
                         "beside it, a .param's .bin too")
    if ext == ".param":  # an ncnn model (bcast.models.ncnn_param)
        from .models import ncnn_param
        found = ncnn_param.lint_param(args.model, args.input, args.target)
        print(ncnn_param.to_json(found, args.model) if args.json else ncnn_param.format_report(found, args.model),
              file=out)
        return EXIT_OK if found.ok else EXIT_NOT_BROADCASTABLE
    if ext == ".xml":  # an OpenVINO IR: no onnx needed
        from .models.lint_ir import lint_ir_report
        report: Report = lint_ir_report(args.model, args.target or "openvino", bin=args.bin)
    elif ext == ".tflite":  # a TFLite flatbuffer: no onnx, no LiteRT needed
        from .models.tflite_model import lint_tflite_report
        report = lint_tflite_report(args.model, args.target or "tflite")
    else:
        from .models.lint import lint_report
        report = lint_report(args.model, args.target or "onnx", args.layout)
    if args.json:
        print(json.dumps(report.to_dict(args.model), indent=2, ensure_ascii=False), file=out)
    else:
        layout = f", layout {args.layout}" if args.layout else ""
        head = (f"{args.model} ({report.describe()}, target {report.target}{layout}): checked "
                f"{_count(report.checked, 'broadcasting node')} of {report.nodes}")
        print(f"{head}: " + (_count(len(report.findings), "finding") if report.findings else "ok"), file=out)
        for f in report.findings:
            print(f"\n{format_finding(f)}", file=out)
    return EXIT_OK if report.ok else EXIT_NOT_BROADCASTABLE


def _cmd_rewrite(args, out) -> int:
    if args.output == "-":  # was: a file named "-" in the current folder
        raise InputError("-o -: the model goes to a file (stdout has the report): name it, e.g. -o out.onnx")
    from .models.lint import format_finding
    from .models.rewrite import rewrite

    result = rewrite(args.model, args.target, args.output, force=args.force)
    if args.json:
        d = {"model": args.model, **result.to_dict()}
        print(json.dumps(d, indent=2, ensure_ascii=False), file=out)
    else:
        done = f"wrote {result.out}" if result.out else "nothing written"
        print(f"{done} (target {args.target}): {_count(len(result.changes), 'change')}", file=out)
        for c in result.changes:
            print(f"  {c}", file=out)
        if result.findings:
            print(f"\n{_count(len(result.findings), 'finding')} left:", file=out)
        for f in result.findings:
            print(f"\n{format_finding(f)}", file=out)
    from .models.findings import blocking

    return EXIT_NOT_BROADCASTABLE if blocking(result.findings) or not result.out else EXIT_OK


class _Terminated(KeyboardInterrupt):
    """SIGTERM / SIGHUP, raised where the command is, as Ctrl-C is: ``finally`` blocks run (rewrite
    removes its temp file) and bcast exits 128 + the signal's number."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _terminate(signum, frame):
    raise _Terminated(signum)


_TERMINATING = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name))


@contextlib.contextmanager
def _terminate_cleanly():
    """While a command runs (main thread only: Python's rule for handlers), SIGTERM and SIGHUP raise."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {s: signal.signal(s, _terminate) for s in _TERMINATING}
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
def _tolerant(stream) -> None:
    """Let a real stdout write what its encoding lacks as escapes (``\\u2208``), as stderr does, instead
    of failing half-way (an ASCII or cp1252 console, a name given as bytes that are not UTF-8)."""
    if getattr(stream, "errors", None) == "strict" and hasattr(stream, "reconfigure"):
        stream.reconfigure(errors="backslashreplace")


def _commands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """Each command's parser, by name."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}  # pragma: no cover - build_parser always adds the commands


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    if out is None:
        out = sys.stdout
        _tolerant(out)
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    commands = _commands(parser)
    if extra:  # named by the command they were given to: `bcast rules --bogus` is bcast rules' error
        (commands.get(args.command) or parser).error(f"unrecognized arguments: {' '.join(extra)}")
    if args.command is None:
        print(f"bcast: error: name a COMMAND: {', '.join(commands)} (see bcast --help)", file=sys.stderr)
        return EXIT_USAGE
    with _terminate_cleanly():
        return _run(args, out)


def _run(args, out) -> int:
    try:
        if args.command in ("shape", "explain"):
            get_rule(args.rule or "numpy")
            code = _cmd_shape_or_explain(args, out)
        else:
            code = {"compare": _cmd_compare, "translate": _cmd_translate, "lint": _cmd_lint,
                    "rewrite": _cmd_rewrite, "conformance": _cmd_conformance, "rules": _cmd_rules,
                    "deviations": _cmd_deviations}[args.command](args, out)
        out.flush()  # a closed pipe shows up here, not at interpreter exit
        return code
    except InputError as e:
        print(one_line(f"bcast {args.command}: error: {e}"), file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:  # `bcast compare ... | head`: stop quietly, as a shell tool does
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError):
            pass
        return 128 + 13
    except KeyboardInterrupt as e:
        return 128 + getattr(e, "signum", signal.SIGINT)

