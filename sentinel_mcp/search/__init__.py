"""Text search over policy documents and memories: paragraphs, embeddings, one SQLite index (words + vectors).
"""
