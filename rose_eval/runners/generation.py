"""The generation settings ROSE is run with: one definition for every way of running it.

rose-run's ``--temperature``/``--max_tokens`` defaults, its request body
(:class:`rose_eval.runners.openai_compat.EndpointConfig`), the inspect task's
``temperature``/``max_tokens`` arguments and the lmms-eval task's ``generation_kwargs``
all come from :data:`DEFAULTS` (a test fails if any of them drifts). Greedy decoding with
a 256-token answer budget is the paper's setting: every answer is a short symbolic line.

Nothing else is sent: ``top_p`` and the rest stay at the provider's default (1.0 for
OpenAI-compatible servers), because several endpoints (OpenAI's reasoning models among
them) refuse sampling parameters they do not support. Send one deliberately with
rose-run's ``--extra_body '{"top_p": 1}'``; the manifest records it.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True)
class GenerationDefaults:
    """Sampling settings of a ROSE run (``max_tokens`` 0 = not sent)."""

    temperature: float = 0.0
    max_tokens: int = 256

    def record(self) -> dict[str, Any]:
        """The settings as a manifest records them."""
        return asdict(self)

    def lmms_eval_generation_kwargs(self) -> dict[str, Any]:
        """lmms-eval's ``generation_kwargs`` for these settings.

        lmms-eval's API wrappers send ``max_new_tokens`` as ``max_tokens`` and
        ``temperature`` as is; its local models decode greedily with ``do_sample: false``
        and one beam, which is what temperature 0 means there.
        """
        return {"max_new_tokens": self.max_tokens, "temperature": self.temperature,
                "num_beams": 1, "do_sample": self.temperature > 0}


DEFAULTS = GenerationDefaults()
