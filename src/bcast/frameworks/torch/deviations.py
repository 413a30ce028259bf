"""PyTorch's deviation records: where torch does not do what its own documentation and ATen's checks say.
Each record follows its ``check``; their proofs are in :mod:`bcast.frameworks.torch.proofs`;
:mod:`bcast.frameworks.deviations` assembles the registry.

Everything else measured agrees with the rules (tests/frameworks/test_torch_run.py): the binary ops
and ``where`` broadcast as numpy (0-d tensors and 0-size dims included), an in-place op refuses to
broadcast ``self`` ("output with shape [2, 1] doesn't match the broadcast shape [2, 3]", also where
only a leading 1 would be added: ``(3,)`` with ``(1, 3)``), ``expand`` keeps a dim for -1 and refuses
-1 on a new leading axis of a tensor of rank >= 1.
"""

from __future__ import annotations

from .._deviation import Deviation, Runtime

__all__ = ["DEVIATIONS", "RUNTIME", "TorchRuntime"]


class TorchRuntime(Runtime):
    """The torch builds whose deviations are recorded."""

    TORCH = "torch"


#: The versions the records were proven on, oldest first (``bcast deviations --check`` reruns the proofs).
_TORCH = ("2.13.0+cpu",)


TORCH_EXPAND_NEGATIVE_SIZE = Deviation(
    id="torch-expand-negative-size",
    runtime=TorchRuntime.TORCH,
    proven_on=_TORCH,
    rules=("unidirectional",),
    ops="Tensor.expand, torch.broadcast_to",
    condition="a size below -1, or a -1 on a new leading axis of a 0-d tensor (which inferExpandGeometry does not "
              "check), where the sizes' product passes c10's element count check (safe_compute_numel: left to right, "
              "as unsigned 64-bit numbers, never overflowing, at most 2^63 - 1), i.e. a 0 among the sizes before "
              "any other size > 1 meets the negative one: "
              "ones(1).expand(-2, 0), tensor(1.5).expand(-1, 0), tensor(1.5).expand(0, 5, -1)",
    behaviour="returns a tensor whose size holds the negative number (torch.Size([-2, 0])); otherwise it refuses only "
              "because the element count overflows ('numel: integer multiplication overflow'), not by the "
              "documented check",
    spec="Tensor.expand's documentation: -1 keeps a dim, and 'for the new ones, the size cannot be set to -1'; "
         "ATen's inferExpandGeometry refuses -1 on a new leading axis ('isn't allowed in a leading, non-existing "
         "dimension'); a size is never negative. bcast refuses every negative size but a -1 on an existing axis",
    only_ops=("expand", "broadcast_to"),
)


DEVIATIONS: tuple[Deviation, ...] = (
    TORCH_EXPAND_NEGATIVE_SIZE,
)

#: The enum of this framework's runtimes: a record is this framework's when its runtime is a member
#: (``bcast compare --framework`` keeps those).
RUNTIME = TorchRuntime
