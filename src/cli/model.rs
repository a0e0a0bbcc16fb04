//! `model init`, `model info` and `generate`: creating, inspecting and sampling models.

use super::Cli;
use crate::model::embedded::{self, EmbeddedSpec};
use crate::model::{
    DeviceChoice, FinishReason, GenerateParams, LanguageModel, LoadOptions, SamplingParams,
    StopCondition, dtype_name, generate, parse_dtype, weight_files,
};
use crate::run::policy::{PolicyRequest, resolve_policy};
use crate::store::Store;
use crate::trajectory::Message;
use anyhow::Context;
use candle_core::DType;
use clap::{Args, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::json;
use std::path::{Path, PathBuf};

/// Where and how precisely a model runs.
#[derive(Debug, Args)]
pub struct RuntimeArgs {
    /// Where to run: cpu, cuda or cuda:N (cuda needs a build with `--features cuda`).
    #[arg(long, default_value = "cpu", value_parser = parse_device)]
    pub device: DeviceChoice,
    /// Compute dtype: f32, f16, bf16 or f64 [default: f32 on the CPU, the stored one on a GPU].
    #[arg(long, value_parser = parse_dtype)]
    pub dtype: Option<DType>,
}

fn parse_device(text: &str) -> Result<DeviceChoice, String> {
    text.parse()
}

impl RuntimeArgs {
    /// The CPU in its default dtype.
    pub fn cpu() -> Self {
        Self {
            device: DeviceChoice::Cpu,
            dtype: None,
        }
    }

    /// The load options these flags ask for.
    pub fn load_options(&self) -> anyhow::Result<LoadOptions> {
        Ok(LoadOptions {
            device: self.device.open()?,
            dtype: self.dtype,
        })
    }
}

/// `rollscope model …`.
#[derive(Debug, Subcommand)]
pub enum ModelCommand {
    /// Build the embedded default model (tokenizer trained in-process, seeded weights).
    Init(InitArgs),
    /// Describe a model folder: architecture, size, dtype, vocabulary, template, tokens.
    Info(InfoArgs),
}

/// Arguments of `rollscope model init`.
#[derive(Debug, Args)]
pub struct InitArgs {
    /// Where to write the model [default: the session's models/base].
    #[arg(long)]
    pub dir: Option<PathBuf>,
    /// Seed of the weight initialisation.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// The shape: `embedded` (the main job's 4.5M-parameter model) or `qwen2.5-0.5b`
    /// (Qwen2.5-0.5B-Instruct's layers, heads and widths with random weights over the
    /// embedded tokenizer, about 0.36B parameters: for GPU checks without a download).
    #[arg(long, value_enum, default_value_t = Shape::Embedded)]
    pub shape: Shape,
    /// Overwrite a model already in the folder.
    #[arg(long)]
    pub force: bool,
}

/// The shapes `model init` builds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Shape {
    /// The embedded default model.
    Embedded,
    /// Qwen2.5-0.5B-Instruct's shape.
    #[value(name = "qwen2.5-0.5b")]
    Qwen2_5_0_5b,
}

/// Arguments of `rollscope model info`.
#[derive(Debug, Args)]
pub struct InfoArgs {
    /// The model folder.
    pub dir: PathBuf,
}

/// Arguments of `rollscope generate`.
#[derive(Debug, Args)]
pub struct GenerateArgs {
    /// The model folder [default: the session's newest policy, else models/base].
    #[arg(long)]
    pub model: Option<PathBuf>,
    /// The user message.
    #[arg(long)]
    pub prompt: String,
    /// A system message before it.
    #[arg(long)]
    pub system: Option<String>,
    /// The most tokens to generate.
    #[arg(long, default_value_t = 128)]
    pub max_new_tokens: usize,
    /// Sampling temperature; 0 is greedy.
    #[arg(long, default_value_t = 0.0)]
    pub temperature: f64,
    /// Nucleus sampling threshold (1 keeps every token).
    #[arg(long, default_value_t = 1.0)]
    pub top_p: f64,
    /// Keep only the k most likely tokens (0 keeps all).
    #[arg(long, default_value_t = 0)]
    pub top_k: usize,
    /// Seed of the first sample (sample i uses seed + i).
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// How many samples.
    #[arg(long, default_value_t = 1)]
    pub n: usize,
    /// Extra stop strings (the model's end-of-turn tokens always stop).
    #[arg(long)]
    pub stop: Vec<String>,
    /// Device and dtype.
    #[command(flatten)]
    pub runtime: RuntimeArgs,
}

/// The model folder of a command by the one policy rule (`run::policy`): `--model`, else
/// session.toml's `model`, else the session's newest policy. `store` is the session's store
/// when the command has it open; otherwise it is opened only if the rule needs run records.
pub fn policy_dir(
    cli: &Cli,
    flag: Option<&Path>,
    store: Option<&Store>,
) -> anyhow::Result<PathBuf> {
    let paths = cli.session_paths()?;
    let runs = || match store {
        Some(store) => Ok(store.runs()?),
        None => Ok(cli.open_store()?.runs()?),
    };
    Ok(resolve_policy(&paths, &PolicyRequest::flag(flag), runs)?.dir)
}

/// Loads a model folder with a spinner.
pub fn load_model(dir: &Path, runtime: &RuntimeArgs) -> anyhow::Result<LanguageModel> {
    anyhow::ensure!(
        dir.is_dir(),
        "no model folder {}: run `rollscope model init` (the embedded default) or pass --model DIR",
        dir.display()
    );
    let spinner = spinner(format!("loading {}", dir.display()));
    let model = LanguageModel::load(dir, &runtime.load_options()?)
        .with_context(|| format!("cannot load model {}", dir.display()));
    spinner.finish_and_clear();
    model
}

/// A spinner on standard error (hidden when it is not a terminal).
pub fn spinner(message: String) -> ProgressBar {
    let bar = ProgressBar::new_spinner();
    bar.set_style(
        ProgressStyle::with_template("{spinner} {msg} {elapsed}")
            .unwrap_or_else(|_| ProgressStyle::default_spinner()),
    );
    bar.set_message(message);
    bar.enable_steady_tick(std::time::Duration::from_millis(120));
    bar
}

/// `rollscope model …`.
pub fn run(cli: &Cli, command: &ModelCommand) -> anyhow::Result<()> {
    match command {
        ModelCommand::Init(args) => init(cli, args),
        ModelCommand::Info(args) => info(cli, args),
    }
}

fn init(cli: &Cli, args: &InitArgs) -> anyhow::Result<()> {
    let dir = match &args.dir {
        Some(dir) => dir.clone(),
        None => {
            let paths = cli.session_paths()?;
            paths.create()?;
            paths.base_model()
        }
    };
    anyhow::ensure!(
        args.force || !dir.join("config.json").exists(),
        "{} already holds a model; pass --force to overwrite it",
        dir.display()
    );
    let shape = match args.shape {
        Shape::Embedded => EmbeddedSpec::default(),
        Shape::Qwen2_5_0_5b => EmbeddedSpec::qwen2_5_0_5b(),
    };
    let spec = EmbeddedSpec {
        seed: args.seed,
        ..shape
    };
    let spinner = spinner(format!("building the embedded model in {}", dir.display()));
    let model = embedded::init_folder(&dir, &spec, &LoadOptions::default());
    spinner.finish_and_clear();
    let model =
        model.with_context(|| format!("cannot build the embedded model in {}", dir.display()))?;
    let parameters = model.config.parameter_count();
    if cli.json {
        let summary = json!({"dir": dir, "architecture": model.config.architecture.class_name(), "parameters": parameters, "vocab": model.chat.tokenizer.vocab_size(), "seed": args.seed});
        println!("{}", crate::text_json::inert_json(&summary)?);
    } else {
        println!(
            "wrote {} ({}, {:.2}M parameters, {} tokens, seed {})",
            dir.display(),
            model.config.architecture,
            parameters as f64 / 1e6,
            model.chat.tokenizer.vocab_size(),
            args.seed
        );
    }
    Ok(())
}

fn info(cli: &Cli, args: &InfoArgs) -> anyhow::Result<()> {
    let model = load_model(
        &args.dir,
        &RuntimeArgs {
            device: DeviceChoice::Cpu,
            dtype: None,
        },
    )?;
    let config = &model.config;
    let files: Vec<String> = weight_files(&args.dir)?
        .iter()
        .filter_map(|path| {
            path.file_name()
                .map(|name| name.to_string_lossy().into_owned())
        })
        .collect();
    let stored = config.stored_dtype.map_or("unknown", dtype_name);
    let specials = model.chat.tokenizer.added_tokens();
    let stops: Vec<String> = model
        .stop_token_ids()
        .iter()
        .map(|&id| {
            format!(
                "{} ({id})",
                model.chat.tokenizer.token_text(id).unwrap_or_default()
            )
        })
        .collect();
    if cli.json {
        let summary = json!({
            "dir": args.dir, "architecture": config.architecture.class_name(), "trainable": config.architecture.is_trainable(),
            "parameters": config.parameter_count(), "layers": config.num_hidden_layers, "hidden_size": config.hidden_size,
            "heads": config.num_attention_heads, "kv_heads": config.num_key_value_heads, "head_dim": config.head_dim,
            "intermediate_size": config.intermediate_size, "vocab_size": config.vocab_size,
            "tokenizer_vocab": model.chat.tokenizer.vocab_size(), "context": config.max_position_embeddings,
            "rope_theta": config.rope_theta, "tied_embeddings": config.tie_word_embeddings, "stored_dtype": stored,
            "weight_files": files, "chat_template": model.chat.template.source_name(),
            "special_tokens": specials.iter().map(|(id, text)| json!({"id": id, "text": text})).collect::<Vec<_>>(),
            "stop_tokens": model.stop_token_ids(),
        });
        println!("{}", crate::text_json::inert_json(&summary)?);
        return Ok(());
    }
    println!("{}", args.dir.display());
    println!(
        "  architecture    {} ({})",
        config.architecture,
        if config.architecture.is_trainable() {
            "trainable"
        } else {
            "inference only"
        }
    );
    println!(
        "  parameters      {} ({:.2}M)",
        config.parameter_count(),
        config.parameter_count() as f64 / 1e6
    );
    println!(
        "  layers          {} × hidden {} (MLP {})",
        config.num_hidden_layers, config.hidden_size, config.intermediate_size
    );
    println!(
        "  heads           {} query, {} key/value, head_dim {}",
        config.num_attention_heads, config.num_key_value_heads, config.head_dim
    );
    println!(
        "  context         {} tokens, RoPE θ = {}",
        config.max_position_embeddings, config.rope_theta
    );
    println!(
        "  embeddings      vocab {} ({} in tokenizer.json), {}",
        config.vocab_size,
        model.chat.tokenizer.vocab_size(),
        if config.tie_word_embeddings {
            "tied"
        } else {
            "untied"
        }
    );
    println!("  weights         {} in {}", stored, files.join(", "));
    println!("  chat template   {}", model.chat.template.source_name());
    println!(
        "  special tokens  {}",
        specials
            .iter()
            .map(|(id, text)| format!("{text} ({id})"))
            .collect::<Vec<_>>()
            .join(" ")
    );
    println!("  stop tokens     {}", stops.join(" "));
    Ok(())
}

/// `rollscope generate`.
pub fn generate_command(cli: &Cli, args: &GenerateArgs) -> anyhow::Result<()> {
    let dir = policy_dir(cli, args.model.as_deref(), None)?;
    let model = load_model(&dir, &args.runtime)?;
    let mut messages = Vec::new();
    if let Some(system) = &args.system {
        messages.push(Message::system(system.clone()));
    }
    messages.push(Message::user(args.prompt.clone()));
    let prompt = model.chat.prompt_ids(&messages, &[])?;
    let params = GenerateParams {
        sampling: SamplingParams {
            temperature: args.temperature,
            top_p: args.top_p,
            top_k: args.top_k,
            seed: args.seed,
        },
        max_new_tokens: args.max_new_tokens,
        stop: StopCondition {
            token_ids: model.stop_token_ids(),
            strings: args.stop.clone(),
        },
    };
    let bar = ProgressBar::new((args.n * args.max_new_tokens) as u64);
    bar.set_style(
        ProgressStyle::with_template("{bar:30} {pos}/{len} tokens ({per_sec}) {elapsed}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let prompts = vec![prompt; args.n];
    let mut decoder = model.decoder();
    let outputs = generate(
        &mut decoder,
        &model.chat.tokenizer,
        &prompts,
        &params,
        &mut |count| bar.inc(count as u64),
    );
    bar.finish_and_clear();
    let outputs = outputs?;
    for (index, output) in outputs.iter().enumerate() {
        let text = model.chat.tokenizer.decode(&output.tokens, false)?;
        let finish = match &output.finish {
            FinishReason::StopToken(id) => format!(
                "stop token {}",
                model.chat.tokenizer.token_text(*id).unwrap_or_default()
            ),
            FinishReason::StopString(text) => format!("stop string {text:?}"),
            FinishReason::MaxTokens => "max tokens".into(),
            FinishReason::ContextFull => "context full".into(),
        };
        let mean = output.logprobs.iter().map(|&x| f64::from(x)).sum::<f64>()
            / output.logprobs.len().max(1) as f64;
        if cli.json {
            let row = json!({"sample": index, "text": text, "tokens": output.tokens, "logprobs": output.logprobs, "finish": finish});
            println!("{}", crate::text_json::inert_json(&row)?);
        } else {
            if args.n > 1 {
                println!("--- sample {} ---", index + 1);
            }
            println!("{}", crate::text::inert(&text));
            eprintln!(
                "[{} tokens, {finish}, mean log-prob {mean:.3}]",
                output.tokens.len()
            );
        }
    }
    Ok(())
}
