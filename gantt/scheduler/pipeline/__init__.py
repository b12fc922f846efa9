"""One request: a RequestSpec to ranked hosts; reads a view, writes nothing."""
