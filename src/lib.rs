//! Rollscope: a terminal workbench for agentic reinforcement learning on language models.
//!
//! This page is the architecture map. It is kept true with every change: a module that
//! moves, a new arrow between modules, or a new data flow changes this page in the same
//! commit. `cargo doc --open` shows it with links.
//!
//! # Modules, lowest first
//!
//! Each module may import the modules on the rows above it, never those below.
//!
//! | module | owns |
//! |---|---|
//! | [`trajectory`], [`text`], [`text_json`], [`figures`], [`stats`], [`config_file`] | The data model: tasks, trajectories (messages, tool calls, token traces, a fork's origin and the branches forked from it), rewards, step scores and labels, runs and their metrics rows, what each run was configured with (`trajectory::RunSettings`, typed by what the run is: a training run's `RunConfig` with its trainer, rollout and loop tables, a rollout's settings, an evaluation's set, a follow's paths; their defaults and checks live with the modules that use them), and [`trajectory::metric`], the one list of metric names, as plain serde types with no I/O. `text` holds string helpers (escaping, "did you mean"); `text_json` JSON that is inert in a terminal (C1 controls and DEL escaped too); `figures` numbers shown with significant digits, never fixed decimals; `stats` a success rate with its Wilson interval and the paired difference of two policies on the same tasks. `config_file` reads the TOML files people write, every key checked, errors as `FILE:LINE: unknown key …; did you mean …?`. |
//! | [`allocator`] | glibc malloc's tuning for the process (freed memory kept for reuse, an arena per thread), which the binary sets at start-up, and the call that hands free memory back after a burst (an import, the store's close, the search index catching up), or every second during one (`allocator::PeriodicRelease`, a long index build). |
//! | [`store`] | The session store: trajectories, tasks, labels (keyed by author, changed only through `store::LabelEdit`), runs and metrics in sled, trajectory records and token traces in an append-only blob log (`store::blobs`: synced before sled learns where they lie; a bulk append leaves the page cache), secondary indexes, listing rows (9 bytes a trajectory, 256 to a sled entry: a listing the indexes or the search index answer reads them, not the summaries), queries, compaction, and [`store::search`], the full-text index (tantivy, in `store/search/`; words indexed by English stem, prefix words answered by a term range: `store::search` `query`) of every message, tool call and tool result, kept in step by `store`'s indexer from a text journal every write appends to (on a background thread once writes pause, and before any search; entries read in chunks under the write lock, so only flushed writes are indexed and writers wait one chunk at most), rebuilt from the records when missing or behind what the journal holds. [`store::Store`] is the handle everything works through: a `store::LocalStore` of this process, or the session server's ([`store::server`], one process per session over `<session>/store.sock`), both driven by the same typed requests ([`store::wire`]); change stamps (`store::ChangeStamp`) tell other processes what was written. |
//! | [`formats`] | Reading and writing other tools' files (23 formats: OpenAI messages, ShareGPT, TRL, verl, Inspect, SWE-agent, OpenHands, PRM800K, OmegaPRM, ATIF, OpenTelemetry GenAI, verifiers, …), every record handed through one intake that checks its text reached the stored trajectory (the loss rule, `formats::LEFT_OUT` the fields left out on purpose) and gives it the id of its content, records from JSONL, JSON or parquet (and any export as parquet, [`formats::write_parquet`]), detection by content, what a run's output folder holds ([`formats::folder_contents`]), metrics logs of other stacks and following them as they grow or are rewritten ([`formats::MetricsFollower`]), the chat-completions wire format (streamed chunks included), [`formats::json_lines`], the one reader of small JSONL texts (task files, the shipped sets), and [`formats::gsm8k`], the one reader of GSM8K rows (the shipped splits, their ground truth and calculator annotations) that the import, the task sets, the embedded tokenizer's corpus and the claims check share. |
//! | [`model`] | The policy: Qwen2/Qwen3 (and Llama) on candle with fused CPU kernels (AVX-512, AVX2 with FMA or portable loops, the best the CPU has or the one `--isa`/`ROLLSCOPE_ISA` names, for the hand-written loops and every gemm product alike: `model::Isa`), tokenizer and chat templates, KV-cached batched decoding, log-probs (training computes the output projection only at the trained tokens, and each prefix a batch's sequences share once: the system prompt, a GRPO group's prompt and common turns, copies, with all padding on one row: `model::shared_prefix`), the embedded default model (its tokenizer trained on GSM8K's train split only). Model work (a decoding forward, scoring, and in [`train`] each step's forwards, backwards and AdamW) runs on the first thread of rayon's global pool through `model::on_pool`, so the parallel ops inside start on a pool thread instead of being handed over one by one from outside, and a step's temporaries stay in one malloc arena. The only module that knows candle's `Device`, besides [`train`]. |
//! | [`synthetic`] | Generated GRPO-shaped rollouts for demos and benchmarks. |
//! | [`agent`] | The environment: task sets, tools (calculator, sandboxed Python, search, external commands), the multi-turn rollout loop over a local or HTTP policy, forks (`agent::rollout::fork`: continuations from the start of a turn, the prefix's tokens kept for a local policy, the messages before the turn optionally edited), outcome rewards, rule and Monte-Carlo process scores, the OpenAI-compatible server (streaming, `n`, `stop`). |
//! | [`train`] | The trainer: masked SFT, the GRPO objective and advantages, AdamW, LoRA, checkpoints, metrics rows. |
//! | [`ingest`] | Imports: a file's items into the store, in batches bounded by count and text size; a run's output folder as a run of kind `import` with its metrics rows; a growing run followed as it is written ([`ingest::Follower`]: polling, ids stable across reads, half-written records retried). |
//! | [`session`], [`curate`] | `session`: a session's folders and `session.toml`, made only by commands that write, private to their owner unless shared with a group (`session::privacy`: umask, modes tightened on open). `curate`: error analysis, suggested labels (rules, and for tasks with an annotated worked solution a diagnosis against it: `curate::suggest`), the session's own label kinds (`curate::labels::LabelKinds`, keys 5–9 named by `[[labels]]`; stored by key as `trajectory::ErrorKind::Session`), the reward-hacking audit, label merges, agreement between annotators ([`curate::agreement`]: Cohen's κ, Krippendorff's α, the steps where authors differ), rejection-sampling selection, repairs of labelled failures (`curate::repair`: which failure of a task and from which turn; the `Repair` records a manifest lists) and exports with manifests; `curate::analysis::paired_runs` compares two evaluation runs task by task. |
//! | [`run`] | Jobs over a session: SFT and GRPO runs (one life for both: start, resume, steps, checkpoints, finish), run configs with their `--set` overrides and `--sweep` grids ([`run::sweep`]), evaluation, rollout jobs, fork jobs (`run::run_fork_job`: children stored under a rollout run, the branches and success-from-here written back on the parent; `run::fork_policy_dir`, the policy that wrote a trajectory), the main job's stages (cold start, GRPO preset, each run marked with its `MainJobStage` so later starts skip what is done) and its goals (`run::cold_start_goals`), runs that other processes watch and steer (`run::live`: the process training a run, its step's activity, requests from any process), the cold start's scripted demonstrations and copy drills (`run::demos`, `run::drills`), the badcase loop after GRPO ([`run::badcase_loop`]: badcase pass, suggested labels, best-of-N selection, repairs of labelled failures ([`run::repair`]), RS-SFT with replayed demonstrations, evaluation before and after), and [`run::policy`], the one rule for which model folder a command uses. |
//! | [`bench`] | Measured speed and memory (store, full-text search, the session server, imports, following a run, model, decoding at the rollout shape, training, GRPO, a stored GRPO step's update, the prefix cache, rollouts, exports, the TUI on a large store and on one 130,000-message transcript; `all` runs the performance table beside PyTorch and TRL), as library calls that return reports. |
//! | [`engine`] | The TUI's worker: typed `Command`s in, typed `Update`s out, on threads of its own; it owns the store handle while the TUI runs, holds the current listing by id (`store::ListedIds`: a million rows are megabytes) and reads the summaries of the window the UI asks for, launches runs as background processes that outlive it (`engine::JobLauncher` writes a typed `engine::JobSpec` under the session's `jobs/` and starts the hidden `rollscope job SPEC`; no command line is built outside `cli`) and steers any run through the store, loads with an opened trajectory the fork tree it belongs to (`engine::fork_tree`, root first, depth first), and when idle it compares the store's change stamps four times a second and says what other processes wrote (`Update::StoreChanged`). |
//! | [`tui`] | The terminal UI: a pure `update(state, message)` over per-tab state (`tui::state`) and render functions (`tui::view`); `tui::wrap` lays text into a view by display width (prose wrapped, code scrolled); `tui::search_hits` marks a search's words in an open trajectory and finds its hit turns; `tui::content` builds an open trajectory's sections (reasoning and long prompt messages folded until `z`, each turn's brief of what it ran) with `tui::render`, which draws untrusted text by what it is (markdown with pulldown-cmark, tool calls by tool and argument with edits diffed by `similar`, tool output by content, the fields an import kept); `tui::outline` lists an open trajectory's sections (`Section`, `SectionContent`) with each turn's brief, `tui::state::open_trajectory` builds a section (highlighted, search words marked) when first shown, and `tui::state::transcript` scrolls the whole conversation, laying out only the sections in view; `tui::charts` says which metrics the Runs tab charts (presets per run kind, or those chosen) and `tui::series` turns them into lines, bands and axes; `tui::state::run_charts` holds the Runs tab's pinned runs (up to four, a colour each), the metrics chosen with `tui::metric_picker` (any a run records; remembered) and the table of runs side by side; `tui::help_page` is the `?` overlay's page (each view's keys from the keymap, the session's label kinds, the prompt's commands) and its scroll; `tui::memory` is the view each annotator left a session in (read at start, written at quit by `tui::terminal`); `tui::terminal` wires the terminal, the keymap and the engine. |
//! | [`cli`] | Argument parsing and printing only: each command calls one library function with plain options and prints what it returns. |
//!
//! # Arrows that must never exist
//!
//! - `tui` → `model` (or candle): the TUI names a device only through the engine's plain
//!   configuration; the engine passes it to the runs it launches as their `--device`.
//! - `tui` → a `Store` of its own: `tui::terminal` hands the one the CLI opened to the
//!   engine; the UI thread never waits on disk or a model.
//! - anything → `cli`, or `clap` outside `cli`: the library takes plain options.
//! - `trajectory` → anything: the data model depends on nothing of the crate.
//! - `store`, `formats` → `model`, `agent`, `train` or `run`.
//!
//! # Data flow
//!
//! **A rollout.** A [`run::RolloutJob`] (or a GRPO step) turns tasks into
//! `agent::rollout::RolloutRequest`s. `agent::rollout::run_rollouts` drives each episode:
//! the policy (a decode thread over a `model::Decoder`, or an HTTP endpoint) generates a
//! turn (a prompt the decoder has prefilled in this phase is copied, not computed again:
//! `model::prefix_cache`), the chat template parses its tool calls, `agent::tools` executes
//! them (Python in the sandbox) and their results return as observation messages (masked
//! out of the loss);
//! at the end `agent::reward` scores the outcome and `agent::prm_rule` the steps. Finished
//! trajectories, with their token traces, are written to the store in batches.
//!
//! **A training step.** `run` draws the step's tasks, rolls them out as above (G per task),
//! computes group-relative advantages (`train::advantage`) and calls
//! `train::Trainer::grpo_update`: the samples cut by length into padded micro-batches
//! (`train::GrpoBatches`), policy and reference log-probs and the clipped objective per
//! micro-batch, normalised by the whole update, gradients summed, then one AdamW step. SFT
//! steps call `Trainer::sft_step` on length-bucketed batches (micro-batched the same way
//! when `sft.micro_batch_tokens` asks). Every step appends one metrics row to the store and
//! to `runs/<run>/metrics.jsonl`; checkpoints (`runs/<run>/checkpoints/checkpoint-N/`) are
//! written atomically, and the final policy is saved as `models/<run>`.
//!
//! **The badcase loop.** `run::run_loop` evaluates the starting policy on the held-out sets,
//! samples N attempts of every training task (a rollout run), writes the suggestion rules'
//! labels on them (`curate::suggest::write_suggestions`), selects best of N
//! (`curate::select`), repairs the labelled failures of the tasks it found nothing for
//! (`run::repair`: `curate::repair` picks each task's failure and the turn of its first
//! error, a person's label before a suggestion; a fork job with one turn per parent
//! resamples from there; the continuations are labelled and selected by the same rules),
//! exports the selection and the repairs with a manifest that names each repair's label into
//! the rollout run's folder (`curate::export_selection`), trains an SFT run on it with
//! replayed demonstrations
//! (`[[sft.replay]]`: task sets whose scripted demonstrations join the selection), and
//! evaluates the new policy on the same sets; every stage is a run of the session, so
//! `stats` compares the two policies.
//!
//! **A live session.** `cli::Cli::open_store` connects to the session's server, starting it
//! (`rollscope session-server`, its own process group) when nothing answers on the socket;
//! the client first checks that the session folder is its user's and writable by no one
//! else, that the socket is one its user made and that the server listening runs as its user
//! (`SO_PEERCRED`), and sends nothing otherwise; the server takes the store's lock (a file of
//! its user's, never a link), serves each connection on a thread of its own (peers of another
//! uid refused, at most 32 connections per client process, a connection idle for 5 minutes
//! closed, bad frames answered with errors), and exits after a minute with no client. Every `Store` method is one `store::wire::Request`: in-process it runs through
//! `store::apply` directly, remotely the server runs the same function. A TUI's engine polls
//! `Store::changes` while idle; the app asks again for the list (same tag, cursor kept), runs or
//! metrics that changed. A client whose server died sends the request again to a new one
//! (requests are idempotent); label rewrites computed from a read are compare-and-swap
//! (`LabelEdit::Swap`, `Store::rewrite_labels`).
//!
//! **A run in the background.** Every training run is a process of its own writing through
//! the server: `rollscope train` in a terminal, the main job (`rollscope --headless`, or
//! started by `rollscope` alone as a job), or a run launched from a TUI (`engine::JobLauncher`:
//! a new session, the job's spec and log under `jobs/`, run by `rollscope job`); a follow of another stack's run (`rollscope import
//! --follow`, or `i` / `:follow` in a TUI, launched the same way) is such a process too. The run's record names its process (`RunInfo::process`)
//! and carries its step's activity (`Store::set_run_progress`, at most once a second); a
//! TUI's `p`/`r`/`x` and `rollscope runs pause|resume|stop` store a `RunRequest`
//! (`run::ask_run`), which the training process's follower thread applies to its
//! `RunControl` between steps. Whoever reads a record whose process is gone sees it
//! `Interrupted` (`run::observed`); resuming it starts a new process, and a run another live
//! process trains is never resumed. Every run (training, rollout, fork, evaluation, import) takes its id in one request (`Store::create_run`; the store offers no other way to get one).
//!
//! **A fork.** `rollscope fork` (or `F` in a TUI, launched in the background like a run)
//! reads the parent and its task, resolves the policy that wrote it (`run::fork_policy_dir`)
//! and checks every fork's start (`agent::rollout::fork_state`) before it opens a rollout
//! run. Each fork puts N episodes in flight from the same state (`episode::run`, the token
//! budget counting the prefix's policy tokens; the decoder prefills the prefix once for
//! all N); the children, scored like any rollout and
//! marked with their `ForkOrigin`, are stored under the run, and the parent gets a
//! `ForkBranch` per fork and, from every turn, `monte_carlo` step scores.
//!
//! **An import.** `formats::detect` picks the format from the content; the format's reader
//! yields items (tasks, trajectories, labels) one record at a time, naming the file and line
//! of any record it refuses; `ingest` writes them to the store in batches. sled records its
//! page table only when it opens, by replaying its log since the last record, so a store
//! closed after many writes (`LocalStore::close`, what the session server does on exit)
//! opens sled once more first: the replay is paid then, not by the next user to open it.
//!
//! **A search.** Every store write that changes what was said moves the store's text
//! generation and records which trajectories it added, replaced or removed (the text
//! journal) in its sled batch, and does nothing more. The store's indexer thread replays the
//! journal into the tantivy index (delete by id, then add the records' documents) once
//! writes have paused for half a second (five minutes at the latest), commits with that
//! generation (and the newest one its reads saw, so a later replay, after a restart too,
//! deletes records it may hold in a newer form before adding them) and prunes what it took
//! in; a search first catches up the same way, so it always answers for everything stored,
//! and an import runs at full speed. Documents go to tantivy's indexing thread one at a
//! time (its queue holds at most 10,000), a long catch-up or rebuild hands freed memory
//! back every second, and tantivy merges on one thread and never merges a segment past
//! 100k documents again (a bulk build's 300k-document segments stay as written): a server
//! building a million trajectories' index stays under 300 MiB. `Store::query`
//! answers a filter's `full_text` through the index (ids → sequence numbers, intersected with
//! the other indexes; a listing in stored order then reads the listing rows, not the
//! summaries); the TUI's `/` and `:filter text:` and `rollscope list --text` all set
//! that field, and the engine's `FindText` gives the trajectory view its hit turns and words.
//!
//! # Durability
//!
//! A write the store has acknowledged survives a crash: trajectories, labels, runs and
//! metrics rows are flushed before the call returns, and a batch is written whole or not at
//! all. A run resumed after a crash (even SIGKILL) continues from its latest complete
//! checkpoint and first removes the metrics rows and trajectories of later steps
//! (`run::RunFiles`, `resume_sft`, `resume_grpo`), so no row is lost or duplicated.
//! Bad input never costs stored data: a malformed record is reported and skipped.
//!
//! # Reproducibility
//!
//! Training is bitwise reproducible: the same seed and config give the same weights and
//! metrics rows in any process on the same machine and instruction set, whatever the thread
//! timing. Every reduction runs in a fixed order (the `model` kernels combine fixed-size
//! tasks' partial sums in task order; `train` adds gradients and norms over the parameters
//! in their order), and decoding is batch-invariant, so rollouts are too.

pub mod agent;
pub mod allocator;
pub mod bench;
pub mod cli;
pub mod config_file;
pub mod curate;
pub mod engine;
pub mod figures;
pub mod formats;
pub mod ingest;
pub mod model;
pub mod run;
pub mod session;
pub mod stats;
pub mod store;
pub mod synthetic;
pub mod text;
pub mod text_json;
pub mod train;
pub mod trajectory;
pub mod tui;
