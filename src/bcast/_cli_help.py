"""How the ``bcast`` command line writes its help: each command's examples, and the formatter that
wraps prose to the terminal and keeps examples whole."""

from __future__ import annotations

import argparse

from .core.shapes import SHAPE_SYNTAX
from .frameworks import names as framework_names
from .rules import RULES

SHAPES_HELP = f"input shapes: {SHAPE_SYNTAX}"

EPILOG_SHAPE = """\
examples:
  bcast shape 2,3,4,5 3,4                          numpy: not broadcastable (exit 1)
  bcast shape 2,3,4,5 3,4 --rule pdpd --axis 1     (2,3,4,5)
  bcast shape 16 1,16,50,50 --rule explicit --axes-mapping 1
  bcast shape [4,3,2] [4,3] --rule ncnn --ncnn-order   B on A's outer h, c: not broadcastable (exit 1)
  bcast shape [4,3,2] [3,2] --rule ncnn --ncnn-order   [4,3,2]
  bcast shape 2x3 3 --json
  bcast shape 4,3 5,3 --framework onnx --op Gemm --trans-b     (4,5)
  bcast shape 2,3 3 --framework onnx --op Add --opset 6 --broadcast 1 --axis 1
  bcast shape 4,3,2 4,3 --framework ncnn --op ADD                (4,3,2)
  bcast shape 2,3 2 --framework openvino --op Add --auto-broadcast pdpd --axis 0

exit status: 0 broadcastable, 1 not broadcastable, 2 bad input
rules: """ + ", ".join(RULES) + """ (bcast rules lists them with their inputs and attributes)
frameworks: """ + ", ".join(framework_names()) + """ (with --framework, --op names one of the framework's ops,
which picks the rule; the op's attributes are options too)"""

EPILOG_EXPLAIN = """\
examples:
  bcast explain 8,1,6,1 7,1,5                      the aligned table, stretched dims starred
  bcast explain 2,3,4 3,4 --rule ncnn              where ncnn puts B, the garbage it computes (exit 1)
  bcast explain 2,3 3,1 --rule pdpd --axis 1       and where OpenVINO deviates from its spec
  bcast explain 1,3,4,4 3 --framework openvino --op PRelu      the rule OpenVINO's PRelu broadcasts by
  bcast explain 4,1 1,8 --framework mnn --op Greater           and the records about that op alone

deviations shown: by --rule, the records about the rule (a record about one op alone needs that op, so those
stay silent); with --framework F --op OP, F's runtimes' records, those about OP included (shape --json too).
exit status: 0 broadcastable, 1 not broadcastable (the table says where and why), 2 bad input
"""

EPILOG_RULES = """\
examples:
  bcast rules                                      every rule: summary, inputs, options, source
  bcast rules --json

exit status: 0, 2 bad input
"""

EPILOG_COMPARE = """\
examples:
  bcast compare 2,3,4,5 3,4                        one row per rule: result or reason
  bcast compare 2,3,4,5 3,4 --axis 1               rules with an axis (pdpd, paddle, onnx-legacy...) use it
  bcast compare 1,3 2,1 3 --json
  bcast compare 2,3 3,1 --framework onnx           one row per ONNX op: the rule it uses, result or reason
  bcast compare 2,3 3,1 --framework ncnn --op ADD  one framework op's row

onnx-legacy runs with broadcast=1 unless --broadcast is given; explicit needs --axes-mapping.
deviations shown: a rule's row, the records about the rule; a framework's row (its element-wise op, or each op
with --framework), also its runtimes' records about that op alone.
exit status: 0 when the comparison was made (whatever each rule says: it is a report), 2 bad input
"""


EPILOG_TRANSLATE = """\
examples:
  bcast translate 2,3,4,5 3,4 --rule paddle --axis 1 --to onnx      Unsqueeze B, then Add
  bcast translate 2,3 3,1 --rule pdpd --axis 1 --to openvino        avoids OpenVINO's pdpd deviation
  bcast translate 4,3,2 3,2 --to ncnn --op Mul                        the .param, as pnnx writes it
  bcast translate 3,1 2,1,6 --rule bidirectional --to numpy --json

the recipe is the minimal one: only the steps the target's own broadcasting does not already do right.
exit status: 0 a recipe, 1 not broadcastable under the rule or no recipe on the target (the reason), 2 bad input
"""

EPILOG_LINT = """\
examples:
  bcast lint model.onnx                            the spec, and onnxruntime's deviations
  bcast lint model.onnx --target ncnn              what pnnx -> ncnn computes wrong or cannot convert
  bcast lint model.onnx --target onnx2ncnn         the same for the legacy onnx2ncnn (raw BinaryOp)
  bcast lint model.onnx --target openvino --json
  bcast lint model.xml                             an OpenVINO IR (model.bin beside it; --bin PATH)

exit status: 0 no findings (or only "values" ones), 1 findings, 2 bad input (not a whole ONNX model or IR, external data
outside its folder)
"""

EPILOG_REWRITE = """\
examples:
  bcast rewrite old.onnx --target onnx -o new.onnx     opset 1-6 broadcast/axis -> opset 7
  bcast rewrite model.onnx --target ncnn -o ncnn.onnx  what pnnx converts wrong, in ops it converts right
  bcast rewrite model.onnx --target onnx2ncnn -o o.onnx   reshaped initializers for the nodes lint flags

exit status: 0 written, nothing left (but "values" findings); 1 findings left (written, or not when a legacy node
has no upgrade);
2 bad input (OUT is MODEL, OUT exists without --force, a bad model): nothing written
"""

EPILOG_CONFORMANCE = """\
examples:
  bcast conformance                                every rule, every installed runtime
  bcast conformance --runtimes openvino --rules pdpd --cases 200
  bcast conformance --html report.html --json > report.json

exit status: 0 every disagreement is explained by the deviation registry; 1 some are not, or nothing was checked,
or a runtime named in --runtimes is not installed (--allow-missing: not a failure); 2 bad input
"""

EPILOG_DEVIATIONS = """\
examples:
  bcast deviations                                 every record, as text
  bcast deviations --json                          every record, as JSON
  bcast deviations --check                         the drift table: run every proof on the installed runtimes

--check prints one row per record: record id, runtime (its package), the versions it was proven on, the
version installed, and the verdict: present (the runtime still deviates as recorded), gone (it now follows
its spec: fixed in the installed version), changed (it does something else; the line below the table says
what), skipped (the runtime, or another the proof needs, is not installed; never left out of the table).
"present (new version)": present on an installed version the record does not list yet; "gone (as recorded)":
gone on a version from the record's "fixed in" on, as it says.

exit status: 0 listed, or (--check) every record that could run is present (or gone as recorded); 1 (--check)
some record is gone or changed, or no record could be checked at all (no runtime installed); 2 bad input
"""


#: The characters ``str.splitlines`` breaks on, and how an error line shows them.
_BREAKS = str.maketrans({c: c.encode("unicode_escape").decode() for c in "\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029"})


def one_line(text: str) -> str:
    """``text`` on one line: its line breaks escaped (argparse copies a token as it was typed).

    >>> one_line("unrecognized arguments: a\\nb")
    'unrecognized arguments: a\\\\nb'
    """
    return text.translate(_BREAKS)


class _Formatter(argparse.HelpFormatter):
    """argparse's formatter, wrapping the description and the epilog to the terminal's width too.

    Prose is reflowed: an unindented line continues the paragraph above it unless a blank line or
    a label (``exit status:``, ``rules:``) starts a new one, so the source's own line breaks never
    show as ragged lines.  An indented line is an example: it stays one line when it fits, else its
    command stays whole on one line and its comment (after two or more spaces) goes under it."""

    _LABELS = ("exit status: ", "rules: ", "frameworks: ", "examples:")

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        import re
        import textwrap

        blocks: list[str | list[str]] = []  # [text] for a prose paragraph, a str for a line as it is printed
        for line in text.splitlines():
            stripped = line.strip()
            lead = line[: len(line) - len(stripped)] if stripped else ""
            if not stripped:
                blocks.append("")
            elif lead and len(indent + line) <= width:
                blocks.append(indent + line)
            elif lead:  # an example too long for one line: the command whole, its comment under it
                command, comment = (re.split(r"\s{2,}", stripped, maxsplit=1) + [""])[:2]
                blocks.append(indent + lead + command)
                if comment:
                    blocks.append(textwrap.fill(comment, width, initial_indent=indent + lead + "    ",
                                                subsequent_indent=indent + lead + "    ", break_on_hyphens=False))
            elif blocks and isinstance(blocks[-1], list) and not stripped.startswith(self._LABELS):
                blocks[-1][0] += " " + stripped
            else:
                blocks.append([stripped])
        out = []
        for block in blocks:
            if isinstance(block, str):
                out.append(block)
            else:  # a labelled paragraph ("exit status: ...") hangs under its label
                hang = "  " if block[0].startswith(self._LABELS) else ""
                out.append(textwrap.fill(block[0], width, initial_indent=indent, subsequent_indent=indent + hang,
                                         break_on_hyphens=False))
        return "\n".join(out)
