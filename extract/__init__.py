"""extract: model catalogs, graph capture with a TorchDynamo backend, the graph store."""
