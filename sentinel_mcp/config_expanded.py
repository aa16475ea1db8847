"""A config text whose variables are expanded already, or that is taken as written.

Why: variables are expanded in one pass over the whole config (``config_vars.expand_tree``), after an
``envFile``'s values joined its server's ``env``. Those values follow the env file's own rule (a single-quoted
one is taken as written, as a shell and docker compose read it) and are expanded where the file is read
(``config_shapes``); marked so, the pass gives them as they are. A value is expanded once: what a variable
gave is never read as another variable.
"""

from __future__ import annotations


class Expanded(str):
    """A text the config's variable pass gives as it is (a plain ``str`` then)."""
