//! hookd's integration tests: one binary, one module per concern.

mod adapter_contract;
mod agents;
mod claude;
mod config_errors;
mod daemon;
mod decisions;
mod dispatch;
mod docs;
mod gate_props;
mod gate_table;
mod golden;
mod headless;
mod library;
mod lookup;
mod model_commands;
mod operator;
mod runner;
mod sec_adapters;
mod sec_daemon;
mod sec_gate;
mod sec_layering;
mod sec_review;
mod sec_runner;
mod sec_trust;
mod support;
mod trust;
