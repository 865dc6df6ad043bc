//! hookd's integration tests: one binary, one module per concern.

mod gate_props;
mod gate_table;
