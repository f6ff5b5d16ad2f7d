"""What is published: ``dataset`` (the tables and graph store as a Hugging Face dataset) and
``graphnet_export`` (our graphs in GraphNet's sample layout)."""
