"""Who is asking: principals (who a caller is), how a caller's credentials resolve to one, the owner's token.
"""
