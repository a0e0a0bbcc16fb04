//! Formats: every real file imports with its content intact, exports have the shapes other
//! tools read, round trips lose nothing, and no input — broken, huge or random — panics.

mod formats {
    mod bad_input;
    pub mod common;
    mod detect;
    mod export;
    mod fuzz;
    mod import_agents;
    mod import_all;
    mod import_interchange;
    mod import_math;
    mod import_openhands;
    mod import_trl;
    mod loss;
    mod round_trip;
}
