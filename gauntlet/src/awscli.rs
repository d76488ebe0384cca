//! The AWS CLI kept running: the witness's calls answered by Python
//! processes that import the CLI once (`awscli_server.py`), instead of a new
//! `aws` process per call, whose start is most of a short call's time.
//!
//! A call takes an idle process, or starts one when all are busy, so calls
//! from several threads still run side by side. Each process runs under a
//! [`Guard`]: it stops with the `Cli`, and with the run on Ctrl-C.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{ChildStdin, ChildStdout, Command, Stdio};
use std::sync::Mutex;

use serde::Deserialize;

use crate::clock::{Category, Clock};
use crate::process::{self, Guard, ProcessError};

const SERVER: &str = include_str!("awscli_server.py");

/// A call the kept-running CLI could not answer.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    #[error(transparent)]
    Process(#[from] ProcessError),
    #[error("the AWS CLI process ({python}) {what}")]
    Broken { python: PathBuf, what: String },
}

/// What one call printed, and its exit code, as `aws` would have.
#[derive(Debug, Clone, Deserialize)]
pub struct Answer {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

struct Worker {
    _guard: Guard,
    requests: ChildStdin,
    answers: BufReader<ChildStdout>,
}

/// The AWS CLI of one virtualenv, in an environment fixed at its start.
pub struct Cli {
    python: PathBuf,
    dir: PathBuf,
    env: Vec<(String, String)>,
    clock: Clock,
    idle: Mutex<Vec<Worker>>,
}

impl Cli {
    /// The CLI beside `aws` (its virtualenv's python), run in `dir` with
    /// only `env` and `PATH` in its environment.
    pub fn new(clock: &Clock, aws: &Path, dir: &Path, env: &[(&str, &str)]) -> Cli {
        Cli {
            python: aws.with_file_name("python"),
            dir: dir.to_owned(),
            env: env
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            clock: clock.clone(),
            idle: Mutex::new(Vec::new()),
        }
    }

    fn broken(&self, what: impl Into<String>) -> CliError {
        CliError::Broken {
            python: self.python.clone(),
            what: what.into(),
        }
    }

    fn start(&self) -> Result<Worker, CliError> {
        let mut cmd = Command::new(&self.python);
        cmd.args(["-c", SERVER])
            .current_dir(&self.dir)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        let mut guard = Guard::spawn(cmd, "aws (kept running)")?;
        let (Some(requests), Some(answers)) = guard.take_pipes() else {
            return Err(self.broken("started without pipes"));
        };
        Ok(Worker {
            _guard: guard,
            requests,
            answers: BufReader::new(answers),
        })
    }

    /// `aws <args>`, with its time accounted to the witness under `label`.
    pub fn call(&self, label: &str, args: &[&str]) -> Result<Answer, CliError> {
        self.clock.wait(Category::Witness, label, || {
            let idle = self.idle.lock().unwrap_or_else(|p| p.into_inner()).pop();
            let mut worker = match idle {
                Some(w) => w,
                None => self.start()?,
            };
            let answer = ask(&mut worker, args);
            if process::interrupted() {
                return Err(ProcessError::Interrupted {
                    label: label.to_owned(),
                }
                .into());
            }
            let answer = answer.map_err(|what| self.broken(what))?;
            self.idle
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push(worker);
            Ok(answer)
        })
    }
}

/// One request and its answer; a worker that fails here is dropped, which
/// stops it.
fn ask(worker: &mut Worker, args: &[&str]) -> Result<Answer, String> {
    let mut line = serde_json::to_string(args).map_err(|e| e.to_string())?;
    line.push('\n');
    worker
        .requests
        .write_all(line.as_bytes())
        .and_then(|()| worker.requests.flush())
        .map_err(|e| format!("took no request: {e}"))?;
    let mut answer = String::new();
    match worker.answers.read_line(&mut answer) {
        Ok(0) => Err("ended without answering".into()),
        Ok(_) => serde_json::from_str(&answer).map_err(|e| format!("answered {answer:?}: {e}")),
        Err(e) => Err(format!("answered nothing readable: {e}")),
    }
}
