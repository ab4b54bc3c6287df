"""ROSE task functions for lmms-eval; the code lives in rose-toolkit (pip install rose-toolkit)."""

from rose_eval.harness.lmms_eval_task import (  # noqa: F401 - names the YAML refers to
    aggregate_pass,
    aggregate_pass_ChineseGlyph,
    aggregate_pass_EmojiContent,
    aggregate_pass_EmojiStyle,
    aggregate_pass_PixelContent,
    aggregate_pass_PixelEdit,
    aggregate_soft,
    aggregate_valid,
    doc_to_messages,
    doc_to_text,
    doc_to_visual,
    process_results,
)
