"""Which prompt a chat model gets: the default few-shot prompt, or the small-model variant.

`variant_for` is the one place that decides it, from the `--model` string: the embedded
Gemma 3 270M (`local`) and any GGUF model under a billion parameters (`local:PATH.gguf`,
counted from the file's header) get `small`; larger local models and every provider get
`default`, the prompt of `wikireact.prompting.react`, so runs on Groq and other providers stay
comparable. A loaded model carries its decision as `prompt_variant` (`models.local.llama`
sets it from `variant_for`; a model of your own may name one); evaluation reports record it.
Both variants speak the same text protocol; `wikireact.prompting.variants` builds them.
"""

from __future__ import annotations

from langchain_core.language_models import BaseChatModel

from wikireact.models.local.gguf import read_gguf
from wikireact.models.local.spec import is_local, local_path
from wikireact.prompting.variants import PROMPT_VARIANTS

EMBEDDED_MODEL_VARIANT = "small"
"""The variant of the embedded Gemma 3 270M (`--model local`), which the small prompt was built for."""
SMALL_MODEL_PARAMETERS = 1_000_000_000
"""Local models with fewer parameters get the small-model prompt (and its guard rails): it
was built and measured on a 270M model; from 1B on (Llama 3.2 1B, Qwen2.5 1.5B/3B, ...) a
model follows the paper's few-shot prompt."""


def prompt_variant(model: BaseChatModel) -> str:
    """Return the name of the prompt variant `model` asks for (`default` unless it names one)."""
    variant = getattr(model, "prompt_variant", None)
    return variant if isinstance(variant, str) and variant in PROMPT_VARIANTS else "default"


def variant_for(spec: str, model: BaseChatModel | None = None) -> str:
    """Return the variant a run of `spec` gets (`model`'s own once it is loaded).

    `local` gets the small variant; `local:PATH.gguf` gets it below `SMALL_MODEL_PARAMETERS`
    parameters (read from the GGUF header, not loading the weights); anything else `default`.
    """
    if model is not None:
        return prompt_variant(model)
    if not is_local(spec):
        return "default"
    path = local_path(spec)
    return local_variant(None if path is None else read_gguf(path).parameters)


def local_variant(parameters: int | None) -> str:
    """Return the variant of a local model with `parameters` (None: the embedded Gemma 3 270M)."""
    if parameters is None:
        return EMBEDDED_MODEL_VARIANT
    return "small" if parameters < SMALL_MODEL_PARAMETERS else "default"
