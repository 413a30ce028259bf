"""The parts of OpenVINO whose deviations are recorded, and the versions the records were proven on
(shared by :mod:`.deviations` and :mod:`.deviations_cpu`)."""

from __future__ import annotations

from .._deviation import Runtime

__all__ = ["OpenVINORuntime"]


class OpenVINORuntime(Runtime):
    """The parts of OpenVINO whose deviations are recorded."""

    OPENVINO = "openvino"
    CPU_PLUGIN = "openvino (CPU plugin)"
    EVALUATE = "openvino (Model.evaluate)"


#: The versions the records were proven on, oldest first (``bcast deviations --check`` reruns the proofs;
#: a record that stops holding gets ``fixed_in`` or its own tuple).
_OV = ("2026.4.1",)
