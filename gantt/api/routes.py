"""Placement's URLs and the handler of each method."""

from gantt.api import router
from gantt.api.handlers import aggregates
from gantt.api.handlers import allocations
from gantt.api.handlers import candidates
from gantt.api.handlers import classes
from gantt.api.handlers import inventories
from gantt.api.handlers import providers
from gantt.api.handlers import reshaper
from gantt.api.handlers import root
from gantt.api.handlers import traits
from gantt.api.handlers import usages

_RP = "/resource_providers/{uuid}"


def declarations():
    """``{path template: {method: handler}}``; a resource not yet served
    is absent (404), as in a Placement older than the resource."""
    return {
        "/": {"GET": root.home},
        "": {"GET": root.home},
        "/resource_classes": {
            "GET": classes.list_classes, "POST": classes.create_class},
        "/resource_classes/{name}": {
            "GET": classes.get_class, "PUT": classes.update_class,
            "DELETE": classes.delete_class},
        "/resource_providers": {
            "GET": providers.list_providers,
            "POST": providers.create_provider},
        _RP: {
            "GET": providers.get_provider,
            "PUT": providers.update_provider,
            "DELETE": providers.delete_provider},
        _RP + "/inventories": {
            "GET": inventories.get_inventories,
            "POST": inventories.create_inventory,
            "PUT": inventories.set_inventories,
            "DELETE": inventories.delete_inventories},
        _RP + "/inventories/{resource_class}": {
            "GET": inventories.get_inventory,
            "PUT": inventories.update_inventory,
            "DELETE": inventories.delete_inventory},
        _RP + "/usages": {"GET": usages.provider_usages},
        _RP + "/aggregates": {
            "GET": aggregates.get_aggregates,
            "PUT": aggregates.set_aggregates},
        _RP + "/traits": {
            "GET": traits.list_provider_traits,
            "PUT": traits.update_provider_traits,
            "DELETE": traits.delete_provider_traits},
        "/traits": {"GET": traits.list_traits},
        "/traits/{name}": {
            "GET": traits.get_trait, "PUT": traits.put_trait,
            "DELETE": traits.delete_trait},
        "/usages": {"GET": usages.total_usages},
        _RP + "/allocations": {"GET": allocations.list_for_provider},
        "/allocations": {"POST": allocations.set_many},
        "/allocation_candidates": {"GET": candidates.list_candidates},
        "/reshaper": {"POST": reshaper.reshape},
        "/allocations/{consumer_uuid}": {
            "GET": allocations.list_for_consumer,
            "PUT": allocations.set_for_consumer,
            "DELETE": allocations.delete_for_consumer},
    }


def router_app():
    return router.Router(declarations())
