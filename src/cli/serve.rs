//! `rollscope serve`: the session's (or any) model behind an OpenAI-compatible endpoint.

use super::Cli;
use super::model::{RuntimeArgs, load_model, policy_dir};
use crate::agent::rollout::LocalPolicy;
use crate::agent::serve::{ServedModel, serve as serve_requests};
use clap::Args;
use std::sync::Arc;

/// Arguments of `rollscope serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// A model folder [default: the session's current policy].
    #[arg(long)]
    pub model: Option<String>,
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1")]
    pub host: String,
    /// Port to listen on (0 picks a free one).
    #[arg(long, default_value_t = 8000)]
    pub port: u16,
    /// The model name clients use [default: the folder's name].
    #[arg(long)]
    pub name: Option<String>,
    /// Requests handled at once (their generation is batched).
    #[arg(long, default_value_t = 16)]
    pub threads: usize,
    /// Reply budget in tokens when a request names none.
    #[arg(long, default_value_t = 512)]
    pub max_tokens: usize,
    /// Device and dtype.
    #[command(flatten)]
    pub runtime: RuntimeArgs,
}

/// `rollscope serve`.
pub fn serve(cli: &Cli, args: &ServeArgs) -> anyhow::Result<()> {
    let dir = policy_dir(cli, args.model.as_deref().map(std::path::Path::new), None)?;
    let model = load_model(&dir, &args.runtime)?;
    let (policy, _thread) = LocalPolicy::spawn(model.sharing_decoder(), model.stop_token_ids())?;
    let name = args.name.clone().unwrap_or_else(|| {
        dir.file_name().map_or_else(
            || "policy".into(),
            |name| name.to_string_lossy().into_owned(),
        )
    });
    let server = tiny_http::Server::http((args.host.as_str(), args.port)).map_err(|error| {
        anyhow::anyhow!("cannot listen on {}:{}: {error}", args.host, args.port)
    })?;
    let address = server.server_addr().to_ip().map_or_else(
        || format!("{}:{}", args.host, args.port),
        |ip| ip.to_string(),
    );
    eprintln!(
        "serving {name} ({}) at http://{address}/v1 · POST /v1/chat/completions · Ctrl-C to stop",
        dir.display()
    );
    let served = ServedModel {
        policy,
        chat: Arc::new(model.chat.clone()),
        name,
        default_max_tokens: args.max_tokens,
    };
    serve_requests(Arc::new(server), served, args.threads);
    Ok(())
}
