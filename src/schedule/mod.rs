//! The scheduler: which URL goes to which worker, and when.
//!
//! `dispatch` owns the frontier and the per-host `politeness` queues under one lock; `robots`
//! turns a host's robots.txt into answers; `robotstore` keeps those answers on disk for
//! hosts that left memory and across runs, `hoststate` the hosts' resting times, `budget`
//! is `--max-pages-per-host`, and `hostrules` the per-host overrides of `--host-rules`. See ARCHITECTURE.md, "schedule/".

pub mod budget;
pub mod dispatch;
pub mod hostrules;
pub mod hoststate;
pub mod politeness;
pub mod pool;
pub mod robots;
pub mod robotstore;
pub mod stop;
