"""Feature files the model decides: answer schemas per step, and the code rendered from the answers."""
