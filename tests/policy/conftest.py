"""Make the policy test rig importable (the suite uses --import-mode=importlib), and start SWI-Prolog the way
``serve`` does.

SWI-Prolog's main engine belongs to the thread that first imports ``pyswip.core``. ``serve`` imports it on the
main thread (``shared_engine()``), so the event loop's thread has an engine and a guard may decide on it
(``EngineThread.try_now``). A test that builds a ``PrologEngine()`` itself would otherwise leave the import to
the engine thread, and every later test in the process would find the main thread without an engine: the
tests of the caller's-thread decisions then failed or passed by file order."""

from sentinel_mcp.policy.swipl_location import import_pyswip_core

import_pyswip_core()
