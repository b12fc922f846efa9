#!/bin/bash
#
# plugin.sh - DevStack plugin entry point of Gantt
#
# DevStack calls this script with the phase as arguments:
# ``stack install``, ``stack post-config``, ``stack extra``, ``unstack``,
# ``clean`` (and others, which Gantt does not need).

# Save trace setting
_XTRACE_GANTT_PLUGIN=$(set +o | grep xtrace)
set -o xtrace

GANTT_PLUGIN_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source $GANTT_PLUGIN_DIR/lib/gantt

if is_gantt_enabled; then
    if [[ "$1" == "stack" && "$2" == "install" ]]; then
        echo_summary "Installing Gantt"
        install_gantt

    elif [[ "$1" == "stack" && "$2" == "post-config" ]]; then
        echo_summary "Configuring Gantt"
        configure_gantt
        init_gantt
        if is_service_enabled gantt-api; then
            create_gantt_accounts
        fi

    elif [[ "$1" == "stack" && "$2" == "extra" ]]; then
        echo_summary "Starting Gantt"
        start_gantt
    fi

    if [[ "$1" == "unstack" ]]; then
        stop_gantt
    fi

    if [[ "$1" == "clean" ]]; then
        cleanup_gantt
    fi
fi

# Restore xtrace
$_XTRACE_GANTT_PLUGIN
