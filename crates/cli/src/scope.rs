//! Who the command acts as: the trusted context an operator states with flags. The person at
//! the terminal owns the store, so any context may be named here; servers bind theirs at
//! start-up instead and never take one from a request.

use anyhow::{Result, bail};
use arbor_domain::id::ScopeId;
use arbor_domain::namespace::Namespace;
use arbor_domain::read_chain::TrustedContext;
use arbor_domain::time::Timestamp;

/// The conversation used when no scope flag is given.
pub(crate) const DEFAULT_CONVERSATION: &str = "default";

#[derive(Debug, Clone, Default, clap::Args)]
pub(crate) struct ScopeArgs {
    /// Act as this conversation (reads conversation -> project -> global).
    #[arg(long, value_name = "ID")]
    conversation: Option<String>,
    /// The project the conversation, run or experiment belongs to; alone, act as the project.
    #[arg(long, value_name = "ID")]
    project: Option<String>,
    /// Act as a run of this automation (with --run).
    #[arg(long, value_name = "ID", requires = "run")]
    automation: Option<String>,
    /// Act as a run of this experiment (with --run and --frozen-at).
    #[arg(long, value_name = "ID", requires_all = ["run", "frozen_at"])]
    experiment: Option<String>,
    /// The run (with --automation or --experiment).
    #[arg(long, value_name = "ID")]
    run: Option<String>,
    /// When the experiment started: its layers show memory as it was then.
    #[arg(long, value_name = "TIME")]
    frozen_at: Option<Timestamp>,
    /// The agent (expert role) a conversation runs as.
    #[arg(long, value_name = "ID")]
    agent: Option<String>,
    /// Exactly one namespace, nothing inherited (e.g. `global`, `project:alpha`).
    #[arg(long, value_name = "NAMESPACE", conflicts_with_all = ["conversation", "project", "automation", "experiment", "run", "agent"])]
    namespace: Option<String>,
}

fn id(value: &Option<String>) -> Result<Option<ScopeId>> {
    Ok(value.as_deref().map(ScopeId::parse).transpose()?)
}

impl ScopeArgs {
    /// Whether any scope flag was given (a server must be told whom it serves; it never falls
    /// back to the default conversation).
    pub(crate) fn is_given(&self) -> bool {
        self.conversation.is_some()
            || self.project.is_some()
            || self.automation.is_some()
            || self.experiment.is_some()
            || self.run.is_some()
            || self.namespace.is_some()
    }

    /// Whether any scope flag at all was given, `--agent` and `--frozen-at` included.
    pub(crate) fn names_anything(&self) -> bool {
        self.is_given() || self.agent.is_some() || self.frozen_at.is_some()
    }

    pub(crate) fn context(&self) -> Result<TrustedContext> {
        if let Some(namespace) = &self.namespace {
            return Ok(TrustedContext::Only { namespace: Namespace::parse(namespace)? });
        }
        let (conversation, project, run, agent) =
            (id(&self.conversation)?, id(&self.project)?, id(&self.run)?, id(&self.agent)?);
        if let Some(experiment) = id(&self.experiment)? {
            let (Some(run), Some(frozen_at)) = (run, self.frozen_at) else {
                bail!("--experiment needs --run and --frozen-at");
            };
            if conversation.is_some() || self.automation.is_some() {
                bail!("an experiment run does not take --conversation or --automation");
            }
            return Ok(TrustedContext::ExperimentRun { run, experiment, project, frozen_at });
        }
        if let Some(automation) = id(&self.automation)? {
            let Some(run) = run else { bail!("--automation needs --run") };
            return Ok(TrustedContext::AutomationRun { run, automation, conversation, project });
        }
        if run.is_some() {
            bail!("--run needs --automation or --experiment");
        }
        if self.frozen_at.is_some() {
            bail!("--frozen-at goes with --experiment");
        }
        match (conversation, project) {
            (Some(conversation), project) => Ok(TrustedContext::Conversation { conversation, project, agent }),
            (None, Some(project)) if agent.is_none() => Ok(TrustedContext::Project { project }),
            (None, Some(_)) => bail!("--agent goes with --conversation"),
            (None, None) => Ok(TrustedContext::Conversation {
                conversation: ScopeId::parse(DEFAULT_CONVERSATION)?,
                project: None,
                agent,
            }),
        }
    }
}
