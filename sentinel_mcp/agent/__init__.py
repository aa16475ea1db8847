"""The agent loop built-in: observe the screen, decide with a model, act through the gateway, reflect."""
