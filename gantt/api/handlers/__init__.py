"""The handlers of the Placement REST API, one module per resource."""
