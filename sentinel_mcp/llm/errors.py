"""What can go wrong in the Cortex, each with a message a user or an LLM caller can act on."""

from __future__ import annotations
from sentinel_mcp.core.errors import SentinelError


class LlmError(SentinelError):
    """Base of every Cortex error; ``str(err)`` is the clear text returned as a tool error."""
    area = "llm"


class ModelUnavailable(LlmError):
    """No model is configured or installed."""


class ModelLoadError(LlmError):
    """The model file exists but is not a loadable GGUF."""


class ContextOverflow(LlmError):
    """The prompt does not fit the model's context window."""


class GrammarError(LlmError):
    """A grammar file or an ad-hoc grammar does not compile, or an unknown grammar name was asked for."""


class SchemaError(LlmError):
    """A JSON Schema is invalid or cannot be turned into a grammar."""


class OutputInvalid(LlmError):
    """The model's output did not parse or validate (e.g. cut off at max_tokens)."""


class InputRejected(LlmError):
    """Input refused by the sanitizer (too long) or the injection detector."""


class InjectionDetected(InputRejected):
    """The input carries a prompt-injection attempt."""


class GenerationCancelled(LlmError):
    """The generation was stopped because its caller was cancelled."""


class ModelBusy(LlmError):
    """The call was refused at once: too many turns of the model are already waiting (the caller's own, or
    everyone's). Nothing was queued; the caller may ask again once some have finished."""


class GenerationTimedOut(LlmError):
    """The generation reached its time limit (``sentinel.llm.max_generation_seconds``) in its prompt's
    evaluation, or with grammar-constrained output still incomplete; the model was handed on."""


class CredentialsLapsed(LlmError):
    """The caller's credentials stopped holding (its token rotated, its certificate revoked) while its call
    waited for the model or ran on it: nothing more was computed for it (``caller_check``)."""
