"""The inference bound of a rulebase's whole load, shared by the engine's load and the load rehearsal's
child. Its own module so the rehearsal starts without importing the engine (issue 21, cold start)."""

# a rulebase's whole load (read, check, compile): the shipped ones take under 100,000; a load that runs on
# (a check that explodes, a clause the loader would call) ends here, about half a minute of this machine
LOAD_INFERENCE_LIMIT = 500_000_000
