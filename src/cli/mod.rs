//! The command line: clap subcommands, each a thin call into the library.

mod agent;
mod agreement;
mod badcase_loop;
mod bench;
mod bench_all;
mod bench_args;
mod bench_print;
mod bench_store_args;
mod bench_transcript;
mod bench_update;
mod curate;
mod curate_stats;
mod data;
mod filter_args;
mod fork;
mod import;
mod import_follow;
mod inspect;
mod job;
mod labels;
mod main_job;
mod model;
mod output;
mod rollout;
mod run_progress;
mod runs;
mod score;
mod serve;
mod session_server;
mod sessions;
mod train;
mod tui;
mod watch;
mod watch_run;

use crate::model::{ISA_ENV, Isa};
use crate::session::{self, SessionPaths};
use crate::store::Store;
use anyhow::Context;
use clap::{Parser, Subcommand};
use std::path::PathBuf;

pub use filter_args::FilterArgs;

/// Rollscope: inspect, label, train and curate agentic RL rollouts from the terminal.
///
/// With no command it opens the TUI at once and runs the main job in the background: on a
/// session's first start it builds the embedded default model, cold-starts it with SFT,
/// evaluates it, then trains the GRPO preset (`--headless`: that work here, figures printed).
#[derive(Debug, Parser)]
#[command(name = "rollscope", version, about, long_about = None, after_help = AFTER_HELP)]
pub struct Cli {
    /// The session to work in (a folder under the sessions root).
    #[arg(
        long,
        global = true,
        env = "ROLLSCOPE_SESSION",
        default_value = "default"
    )]
    pub session: String,
    /// The sessions root [default: $ROLLSCOPE_SESSIONS, else ./sessions].
    #[arg(long, global = true, value_name = "DIR")]
    pub sessions_dir: Option<PathBuf>,
    /// Print machine-readable JSON instead of text.
    #[arg(long, global = true)]
    pub json: bool,
    /// The instruction set of the model's CPU kernels and matrix products: avx512, avx2 or
    /// portable [default: the best this CPU and build have]. Each rounds differently, so a
    /// run reproduces bit for bit on the same one: `--isa avx2` on an AVX-512 machine repeats
    /// an AVX2 laptop's run. Processes this one starts use it too.
    #[arg(long, global = true, env = ISA_ENV, value_name = "ISA", value_parser = usable_isa)]
    pub isa: Option<Isa>,
    /// With no command: run the main job (cold start, then the GRPO preset) here without the
    /// TUI, printing the figures; later starts skip what the main job finished.
    #[arg(long)]
    pub headless: bool,
    /// With no command: the main job's seed, for the embedded model's weights and every
    /// preset's data order and sampling (use one session per seed, e.g. `--session seed1
    /// --seed 1`).
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// What to do.
    #[command(subcommand)]
    pub command: Option<Command>,
}

const AFTER_HELP: &str = "\
Examples:
  rollscope import runs/*.jsonl                 bring trajectories in (format detected)
  rollscope list --fail --unlabelled            the badcase queue
  rollscope show 1f3a                           a trajectory, turn by turn
  rollscope label 1f3a --turn 2 --kind calculation
  rollscope export --format openai --pass -o sft.jsonl
  rollscope suggest --fail                      suggested error labels, with evidence
  rollscope stats                               error analysis per policy version
  rollscope select --per-task 1 -o best.jsonl   best-of-N selection + manifest
  rollscope tool calculator '{\"expression\": \"0.1+0.2\"}'
  rollscope tasks --set arith:3 --limit 5       generated tasks, difficulty 3";

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Import trajectories and tasks from files (format detected from content).
    Import(import::ImportArgs),
    /// Export trajectories to a file in another tool's format.
    Export(data::ExportArgs),
    /// List trajectories, filtered and sorted.
    List(data::ListArgs),
    /// List the tasks of the session.
    Tasks(data::TasksArgs),
    /// Delete the trajectories a filter selects.
    Delete(data::DeleteArgs),
    /// Rewrite the store to reclaim the space of deleted records.
    Compact,
    /// Print one trajectory turn by turn.
    Show(inspect::ShowArgs),
    /// Label a step of a trajectory with an error kind.
    Label(inspect::LabelArgs),
    /// Error analysis: labels per kind, run, version and source; accuracy, pass@k, length,
    /// format and numeric error per policy version; suggested-label precision.
    Stats(curate_stats::StatsArgs),
    /// Suggest error labels (with their evidence) for the trajectories a filter selects.
    Suggest(curate::SuggestArgs),
    /// The reward-hacking audit: high-reward trajectories with suspicious traits.
    Audit(curate::AuditArgs),
    /// Rejection-sampling selection (best of N per task): preview, or write with a manifest.
    #[command(alias = "curate")]
    Select(curate::SelectArgs),
    /// Export or import labels (JSONL), merging a teammate's without overwriting.
    #[command(subcommand)]
    Labels(labels::LabelsCommand),
    /// List the sessions under the sessions root; `sessions new NAME` makes one.
    Sessions(sessions::SessionsArgs),
    /// Follow a run: a session run's metrics, rollouts and status through the store, or a
    /// metrics file (ours, verl's file logger, TRL's trainer_state.json).
    Watch(watch::WatchArgs),
    /// What trains where: every run, the process and machine training it, its log;
    /// `runs pause|resume|stop RUN` steers one from any terminal.
    Runs(runs::RunsArgs),
    /// Create or inspect model folders.
    #[command(subcommand)]
    Model(model::ModelCommand),
    /// Generate a reply to a prompt with a model.
    Generate(model::GenerateArgs),
    /// Per-token log-probs of each trajectory's policy tokens under a model, as JSONL.
    Score(score::ScoreArgs),
    /// Measure speed and memory: `bench store`, `bench model`, `bench train`, `bench grpo`,
    /// `bench update`, `bench prefix`, `bench rollout`, `bench tui`, `bench export`.
    #[command(subcommand)]
    Bench(bench::BenchCommand),
    /// Call a tool by hand (calculator, python, search, or a session `[[tools]]` entry).
    #[command(after_help = agent::tool_help())]
    Tool(agent::ToolArgs),
    /// Check the arithmetic claims of GSM8K-shaped solutions exactly.
    Claims(agent::ClaimsArgs),
    /// Multi-turn rollouts of a policy on a task set, with tools, rewards and process scores.
    Rollout(rollout::RolloutArgs),
    /// Ask the policy "what if": continue a trajectory from one of its turns N times, an
    /// observation or user message optionally edited; `--all-turns` for success-from-here.
    Fork(fork::ForkArgs),
    /// Serve a model over an OpenAI-compatible HTTP endpoint.
    Serve(serve::ServeArgs),
    /// Train a policy: `train sft` or `train grpo` from a TOML run config, `--resume RUN`.
    #[command(subcommand)]
    Train(train::TrainCommand),
    /// Evaluate a model on held-out tasks: accuracy, pass@k, length, format, numeric error.
    Eval(train::EvalArgs),
    /// The badcase loop after GRPO: sample, suggest labels, select best of N, RS-SFT,
    /// evaluate before and after (examples/loop-tiny.toml).
    Loop(badcase_loop::LoopArgs),
    /// Open the terminal UI (also what `rollscope` alone does); `--blind` for blind
    /// labelling.
    Tui(tui::TuiArgs),
    /// The session server every command talks to (started by them, never by hand).
    #[command(name = crate::store::SERVER_SUBCOMMAND, hide = true)]
    SessionServer(session_server::SessionServerArgs),
    /// A job the TUI or the main job launched in the background, from the spec it wrote
    /// (started by them, never by hand).
    #[command(name = crate::engine::JOB_COMMAND, hide = true)]
    Job(job::JobArgs),
    /// Fill the session with synthetic GRPO rollouts, tasks, a run and its metrics.
    DemoData(tui::DemoDataArgs),
}

impl Cli {
    /// The selected session's paths.
    pub fn session_paths(&self) -> anyhow::Result<SessionPaths> {
        let root = session::sessions_root(self.sessions_dir.as_deref());
        SessionPaths::new(&root, &self.session)
    }

    /// The error kinds of the selected session: the four and its `[[labels]]`.
    pub fn label_kinds(&self) -> anyhow::Result<crate::curate::labels::LabelKinds> {
        Ok(self.session_paths()?.load_config()?.labels)
    }

    /// The selected session's paths; the session must exist (commands that only read
    /// never make one: a mistyped name is an error with the sessions there).
    pub fn existing_session(&self) -> anyhow::Result<SessionPaths> {
        let root = session::sessions_root(self.sessions_dir.as_deref());
        session::existing_session(&root, &self.session)
    }

    /// Opens the selected session's store through its session server (started when none
    /// runs), so any number of commands and TUIs work on the session at once. The session
    /// must exist.
    pub fn open_store(&self) -> anyhow::Result<Store> {
        let paths = self.existing_session()?;
        session::privacy::protect(&paths, &paths.load_config()?)?;
        session_server::connect(&paths.store_dir())
            .with_context(|| format!("cannot open session `{}`", paths.name))
    }

    /// `open_store` for commands that write (import, the main job, runs): the session is
    /// made when it does not exist.
    pub fn create_store(&self) -> anyhow::Result<Store> {
        let paths = self.session_paths()?;
        paths.create()?;
        session::privacy::protect(&paths, &paths.load_config()?)?;
        session_server::connect(&paths.store_dir())
            .with_context(|| format!("cannot open session `{}`", paths.name))
    }
}

/// `--isa`'s value: an instruction set this CPU and build run.
fn usable_isa(text: &str) -> Result<Isa, crate::model::IsaError> {
    text.parse::<Isa>()?.usable()
}

/// Runs a parsed command line.
pub fn run(cli: Cli) -> anyhow::Result<()> {
    match &cli.command {
        None => main_job::main_job(&cli),
        Some(Command::Tui(args)) => tui::tui(&cli, args),
        Some(Command::Import(args)) if args.follow => {
            import_follow::follow(&cli, &args.files, args.format, args.every)
        }
        Some(Command::Import(args)) => import::import(&cli, args),
        Some(Command::Export(args)) => data::export(&cli, args),
        Some(Command::List(args)) => data::list(&cli, args),
        Some(Command::Tasks(args)) => data::tasks(&cli, args),
        Some(Command::Delete(args)) => data::delete(&cli, args),
        Some(Command::Compact) => data::compact(&cli),
        Some(Command::Show(args)) => inspect::show(&cli, args),
        Some(Command::Label(args)) => inspect::label(&cli, args),
        Some(Command::Stats(args)) if args.agreement => agreement::agreement(&cli, args),
        Some(Command::Stats(args)) => curate_stats::stats(&cli, args),
        Some(Command::Suggest(args)) => curate::suggest(&cli, args),
        Some(Command::Audit(args)) => curate::audit(&cli, args),
        Some(Command::Select(args)) => curate::select(&cli, args),
        Some(Command::Labels(command)) => labels::run(&cli, command),
        Some(Command::Sessions(args)) => sessions::sessions(&cli, args),
        Some(Command::Watch(args)) => watch::watch(&cli, args),
        Some(Command::Runs(args)) => runs::runs(&cli, args),
        Some(Command::Model(command)) => model::run(&cli, command),
        Some(Command::Generate(args)) => model::generate_command(&cli, args),
        Some(Command::Score(args)) => score::score(&cli, args),
        Some(Command::Bench(command)) => bench::run(&cli, command),
        Some(Command::Tool(args)) => agent::tool(&cli, args),
        Some(Command::Claims(args)) => agent::claims(&cli, args),
        Some(Command::DemoData(args)) => tui::demo_data(&cli, args),
        Some(Command::Rollout(args)) => rollout::rollout(&cli, args),
        Some(Command::Fork(args)) => fork::fork(&cli, args),
        Some(Command::Serve(args)) => serve::serve(&cli, args),
        Some(Command::Train(command)) => train::train(&cli, command),
        Some(Command::Eval(args)) => train::eval(&cli, args),
        Some(Command::Loop(args)) => badcase_loop::badcase_loop(&cli, args),
        Some(Command::SessionServer(args)) => session_server::session_server(args),
        Some(Command::Job(args)) => job::job(&cli, args),
    }
}
