//! The kernel source as the emulated driver's build reads it (a part of
//! tests/support/emulated_driver.rs): a module's text with its includes, and its kernels with
//! what the driver's table needs of each (cooperative, `__launch_bounds__`, `__restrict__`
//! parameters), found by scanning the source.

use super::root;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The text of the kernel source at `path` with each `#include "…"` of a file beside it or
/// below `kernels/` replaced by that file's text (once).
pub fn module_text(path: &Path) -> String {
    fn inline(path: &Path, seen: &mut BTreeSet<PathBuf>, out: &mut String) {
        let text =
            std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        for line in text.lines() {
            let included = line
                .trim_start()
                .strip_prefix("#include \"")
                .and_then(|rest| rest.split_once('"'))
                .map(|(file, _)| file);
            match included {
                Some(file) => {
                    let beside = path.parent().unwrap().join(file);
                    let target = if beside.is_file() {
                        beside
                    } else {
                        root().join("kernels").join(file)
                    };
                    if seen.insert(target.clone()) {
                        inline(&target, seen, out);
                    }
                }
                None => {
                    out.push_str(line);
                    out.push('\n');
                }
            }
        }
    }
    let mut out = String::new();
    inline(path, &mut BTreeSet::new(), &mut out);
    out
}

/// A function defined in kernel source: its name, body, and whether it is a kernel.
#[derive(Debug)]
struct Definition {
    name: String,
    body: String,
    kernel: bool,
    /// The first argument of its `__launch_bounds__`, as written.
    launch_bound: Option<String>,
    /// Bit k: its parameter k is declared `__restrict__`.
    restrict_mask: u64,
}

/// Bit k set where parameter k of the parameter list `parameters` (the text between the
/// parentheses) is declared `__restrict__`.
fn restrict_mask(parameters: &str) -> u64 {
    let mut depth = 0;
    let mut mask = 0u64;
    let (mut index, mut start) = (0, 0);
    for (at, c) in parameters
        .char_indices()
        .chain(std::iter::once((parameters.len(), ',')))
    {
        match c {
            '(' | '<' => depth += 1,
            ')' | '>' => depth -= 1,
            ',' if depth == 0 => {
                if parameters[start..at].contains("__restrict__") && index < 64 {
                    mask |= 1 << index;
                }
                index += 1;
                start = at + 1;
            }
            _ => {}
        }
    }
    mask
}

/// The source without comments and preprocessor lines (continuations included).
fn code_only(source: &str) -> String {
    let mut out = String::with_capacity(source.len());
    let mut chars = source.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, chars.peek()) {
            ('/', Some('/')) => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        out.push('\n');
                        break;
                    }
                }
            }
            ('/', Some('*')) => {
                chars.next();
                let mut previous = ' ';
                for c in chars.by_ref() {
                    if previous == '*' && c == '/' {
                        break;
                    }
                    previous = c;
                }
                out.push(' ');
            }
            _ => out.push(c),
        }
    }
    let mut kept = String::with_capacity(out.len());
    let mut continued = false;
    for line in out.lines() {
        let directive = continued || line.trim_start().starts_with('#');
        continued = directive && line.trim_end().ends_with('\\');
        if !directive {
            kept.push_str(line);
        }
        kept.push('\n');
    }
    kept
}

/// The index just past the bracket that closes the one at `open`.
fn closing(bytes: &[u8], open: usize, (left, right): (u8, u8)) -> Option<usize> {
    let mut depth = 0usize;
    for (i, &b) in bytes.iter().enumerate().skip(open) {
        if b == left {
            depth += 1;
        } else if b == right {
            depth -= 1;
            if depth == 0 {
                return Some(i + 1);
            }
        }
    }
    None
}

/// Every function defined at file scope in `source` (comments and preprocessor lines ignored;
/// both branches of an `#ifdef` are kept).
fn definitions(source: &str) -> Vec<Definition> {
    let code = code_only(source);
    let bytes = code.as_bytes();
    let is_name = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let mut found = Vec::new();
    let (mut i, mut statement_start) = (0, 0);
    while i < bytes.len() {
        match bytes[i] {
            b'{' => {
                // A brace at file scope that no signature opened (a struct, a namespace): skip it.
                i = closing(bytes, i, (b'{', b'}')).unwrap_or(bytes.len());
                statement_start = i;
            }
            b';' => {
                i += 1;
                statement_start = i;
            }
            b'(' => {
                let mut name_start = i;
                while name_start > 0 && bytes[name_start - 1].is_ascii_whitespace() {
                    name_start -= 1;
                }
                let name_end = name_start;
                while name_start > 0 && is_name(bytes[name_start - 1]) {
                    name_start -= 1;
                }
                let close = closing(bytes, i, (b'(', b')')).unwrap_or(bytes.len());
                let rest = code[close..].trim_start();
                let rest = rest.strip_prefix("const").unwrap_or(rest).trim_start();
                if rest.starts_with('{') && name_start < name_end {
                    let open = bytes.len() - rest.len();
                    let end = closing(bytes, open, (b'{', b'}')).unwrap_or(bytes.len());
                    found.push(Definition {
                        name: code[name_start..name_end].to_string(),
                        body: code[open..end].to_string(),
                        kernel: code[statement_start..name_start].contains("__global__"),
                        launch_bound: launch_bound(&code[statement_start..name_start]),
                        restrict_mask: restrict_mask(&code[i + 1..close.saturating_sub(1)]),
                    });
                    i = end;
                    statement_start = end;
                } else {
                    i = close;
                }
            }
            _ => i += 1,
        }
    }
    found
}

/// The first argument of the `__launch_bounds__(…)` in a declaration's `head`.
fn launch_bound(head: &str) -> Option<String> {
    let (_, rest) = head.split_once("__launch_bounds__")?;
    let rest = rest.trim_start().strip_prefix('(')?;
    let mut depth = 0;
    let end = rest.find(|c| {
        match c {
            '(' => depth += 1,
            ')' if depth == 0 => return true,
            ')' => depth -= 1,
            ',' if depth == 0 => return true,
            _ => {}
        }
        false
    })?;
    Some(rest[..end].trim().to_string())
}

/// A kernel of a module, as [`kernels`] finds it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Kernel {
    /// Its name.
    pub name: String,
    /// Whether its body, or a function it names (transitively), reaches `__syncthreads` or a
    /// warp shuffle.
    pub cooperative: bool,
    /// The most threads per block its `__launch_bounds__` allows, as written (an expression
    /// of the module's macros); none: the device's 1024.
    pub launch_bound: Option<String>,
    /// Bit k: its parameter k is declared `__restrict__` (the emulated driver refuses a launch
    /// that gives it the address of another parameter, one of them written).
    pub restrict_mask: u64,
}

/// Whether `text` holds `word` as a whole identifier.
fn holds_word(text: &str, word: &str) -> bool {
    let is_name = |c: char| c.is_ascii_alphanumeric() || c == '_';
    text.match_indices(word).any(|(at, _)| {
        !text[..at].ends_with(is_name) && !text[at + word.len()..].starts_with(is_name)
    })
}

/// The kernels of `source` in order.
pub fn kernels(source: &str) -> Vec<Kernel> {
    let definitions = definitions(source);
    let mut cooperative: BTreeSet<&str> = definitions
        .iter()
        .filter(|d| d.body.contains("__syncthreads") || d.body.contains("__shfl_"))
        .map(|d| d.name.as_str())
        .collect();
    loop {
        let more: Vec<&str> = definitions
            .iter()
            .filter(|d| !cooperative.contains(d.name.as_str()))
            .filter(|d| cooperative.iter().any(|c| holds_word(&d.body, c)))
            .map(|d| d.name.as_str())
            .collect();
        if more.is_empty() {
            break;
        }
        cooperative.extend(more);
    }
    definitions
        .iter()
        .filter(|d| d.kernel)
        .map(|d| Kernel {
            name: d.name.clone(),
            cooperative: cooperative.contains(d.name.as_str()),
            launch_bound: d.launch_bound.clone(),
            restrict_mask: d.restrict_mask,
        })
        .collect()
}
