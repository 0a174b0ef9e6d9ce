"""ragdesk's engine: loading, chunking, analyzers, BM25 and explanations, prompts, storage. No Qt here."""
