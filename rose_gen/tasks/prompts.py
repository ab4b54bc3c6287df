"""The protocol strings, byte for byte as v0.1 (and our fixed T4/T5 sentences).

``prompt = PROMPT_GLOBAL + "\\n" + prompt_local``; models see prompt_global, then the
image, then prompt_local.
"""

from __future__ import annotations

PROMPT_GLOBAL = (
    "You are given a grid image. Rows are counted from top to bottom, and columns from left"
    " to right, both starting from 1. Output only the formal answer in the required format."
    " Do not output any explanation.\n"
    "\n"
    "Allowed answer formats:\n"
    "1) COUNT(n)\n"
    "2) CLICK(Rr,Cc); CLICK(Rr,Cc); ...; DONE\n"
    "3) CLICK(Rr,Cc); CLICK(Rr,Cc); ...; SUBMIT(n)\n"
    "\n"
    "Examples:\n"
    "COUNT(3)\n"
    "CLICK(R2,C5); CLICK(R4,C7); DONE\n"
    "CLICK(R2,C5); CLICK(R4,C7); SUBMIT(2)\n"
)

# expected_output_format per task mode
OUTPUT_FORMATS: dict[str, str] = {
    "COUNT": "COUNT(n)",
    "CLICK": "CLICK(Rr,Cc); ...; DONE",
    "CLICK_COUNT": "CLICK(Rr,Cc); ...; SUBMIT(n)",
}

def count_sentence(region_phrase: str) -> str:
    """COUNT prompt_local, e.g. for the phrase ``in row 4``."""
    return (
        f"Count the number of cells that are different from the majority {region_phrase}."
        " Answer only in the format: COUNT(n)."
    )


def click_sentence(region_phrase: str) -> str:
    """CLICK ... DONE prompt_local for a numeric region phrase."""
    return (
        f"Click all cells that are different from the majority {region_phrase}."
        " Answer only using CLICK(Rr,Cc); ...; DONE."
    )


def exclusion_sentence(excluded: str) -> str:
    """CLICK ... SUBMIT prompt_local; ``excluded`` is e.g. ``rows 3 to 5``."""
    return (
        f"Click all cells that are different from the majority, excluding {excluded},"
        " then submit the number of cells you clicked."
        " Answer only using CLICK(Rr,Cc); ...; SUBMIT(n)."
    )


def full_prompt(prompt_local: str) -> str:
    """The row's ``prompt``: prompt_global, a newline, prompt_local."""
    return PROMPT_GLOBAL + "\n" + prompt_local


def cell_label(row: int, col: int) -> str:
    """A coordinate string ``R<r>,C<c>``."""
    return f"R{row},C{col}"
