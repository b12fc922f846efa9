"""The scheduling engine: host cache, request, pipeline stages and claims."""
