"""The run profile's record: `RunProfile`, its fields, and `UNKNOWN`, what a field nothing points at says."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

UNKNOWN = "unknown"


@dataclass(frozen=True)
class RunProfile:
    """What kind of run this was. Fields say "unknown" (model_params None) where nothing points at a value.

    `evidence` maps each known field to the file, metric or name that said it.
    """

    method: str = UNKNOWN
    objective: str = UNKNOWN
    algorithm: str | None = None
    model_params: int | None = None
    precision: str = UNKNOWN
    framework: str = UNKNOWN
    evidence: dict[str, str] = field(default_factory=dict)
    # the run's own files say its weights started random (a from-scratch sign): whatever the objective, its rates are
    # judged as training from random weights, not as fine-tuning a trained model's
    from_random_weights: bool = False

    def to_dict(self) -> dict[str, Any]:
        """The `run_profile` of `analyze --json`."""
        return {"method": self.method, "objective": self.objective, "algorithm": self.algorithm,
                "model_params": self.model_params, "precision": self.precision, "framework": self.framework,
                "evidence": dict(self.evidence), "from_random_weights": self.from_random_weights}

    @property
    def unknown(self) -> list[str]:
        """The fields nothing pointed at."""
        values = {"method": self.method, "objective": self.objective, "precision": self.precision,
                  "framework": self.framework, "model_params": self.model_params}
        return [k for k, v in values.items() if v in (UNKNOWN, None)]
