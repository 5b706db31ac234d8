//! The op reference in docs/ops.md, generated from the op table (`ops/table.rs`): one row per op with its
//! JS call, what it does (dtype rules included) and its JSON form. The unit test below fails when
//! docs/ops.md differs; `AFFON_BLESS=1 cargo test --lib op_reference` rewrites it.

use super::Rule;

fn rule_text(rule: Rule) -> &'static str {
    match rule {
        Rule::Any | Rule::Numeric => "float32, int32, uint32",
        Rule::Signed => "float32, int32",
        Rule::Float => "float32",
        Rule::Bool | Rule::Logical => "bool",
        Rule::Compare => "any two equal dtypes → bool",
    }
}

/// A default as JS writes it.
fn js_default(rust: &str) -> String {
    let s: String = rust.split_whitespace().collect();
    match s.as_str() {
        _ if s.ends_with("Axes::ALL") => "all".into(),
        _ if s.ends_with("Pair::ONE") => "1".into(),
        _ if s.ends_with("Coords::NONE") => "to the end".into(),
        "None" => "reversed".into(),
        _ if s.starts_with("Vec::") => "to the end".into(),
        _ => s,
    }
}

fn row(out: &mut String, js: &str, call: &str, what: &str, json: &str) {
    let cell = |t: &str| t.replace('|', "\\|"); // a pipe would end the cell
    out.push_str(&format!(
        "| `{js}` | {} | {} | {} |\n",
        cell(call),
        cell(what),
        cell(json)
    ));
}

macro_rules! unary_rows {
    ($(($m:ident, $v:ident, $js:literal, $rule:ident, $doc:literal, $body:literal, $grad:tt $($rest:tt)*)),* $(,)?) => {
        fn unary_rows(out: &mut String) {
            $(row(out, $js, concat!("`x.", $js, "()`"), &format!("{} — {}", $doc, rule_text(super::UnaryOp::$v.rule())), concat!("`", $js, "`"));)*
        }
    };
}
crate::unary_table!(unary_rows);

macro_rules! binary_rows {
    ($(($m:ident, $v:ident, $js:literal, $rule:ident, $doc:literal, $body:literal, $grad:tt $($rest:tt)*)),* $(,)?) => {
        fn binary_rows(out: &mut String) {
            $(row(out, $js, concat!("`a.", $js, "(b)` (b: Tensor or number; broadcasts)"), &format!("{} — {}", $doc, rule_text(super::BinaryOp::$v.rule())), concat!("`", $js, "`"));)*
        }
    };
}
crate::binary_table!(binary_rows);

macro_rules! reduce_rows {
    ($(($m:ident, $v:ident, $js:literal, $rule:ident, $doc:literal, $body:literal, $grad:tt $($rest:tt)*)),* $(,)?) => {
        fn reduce_rows(out: &mut String) {
            $(row(out, $js, concat!("`x.", $js, "(axes?, keepDims = false)`"), &format!("{} Over `axes` (all when omitted) — {}", $doc, rule_text(super::ReduceOp::$v.rule())), concat!("`", $js, "` with `axes`, `keepDims`"));)*
        }
    };
}
crate::reduce_table!(reduce_rows);

/// `(x.)name(args, required, optional = default)` as JS calls it.
fn call(js: &str, args: &[&str], req: &[&str], opt: &[(&str, String)], node: bool) -> String {
    let mut params: Vec<String> = args
        .iter()
        .skip(usize::from(!node))
        .map(|a| a.to_string())
        .collect();
    params.extend(req.iter().map(|r| r.to_string()));
    params.extend(opt.iter().map(|(k, d)| format!("{k} = {d}")));
    let recv = if node {
        "p"
    } else {
        args.first().copied().unwrap_or("x")
    };
    format!("`{recv}.{js}({})`", params.join(", "))
}

macro_rules! kernel_rows {
    (surfaced: [$(($m:ident, $v:ident, $js:literal, $doc:literal, $k:path, [$($a:ident),*],
        [$($f:ident $fk:literal : $ft:ty => $fts:literal),*],
        [$($o:ident $ok:literal : $ot:ty = $od:expr => $ots:literal),*], $kgrad:tt $($rest:tt)*)),* $(,)?],
     internal: [$($i:tt),* $(,)?] $(,)?) => {
        fn kernel_rows(out: &mut String) {
            $(
                let opt: &[(&str, String)] = &[$(($ok, js_default(stringify!($od)))),*];
                let req: &[&str] = &[$($fk),*];
                let keys: &[&str] = &[$($fk,)* $($ok),*];
                let json = if keys.is_empty() { concat!("`", $js, "`").to_string() } else {
                    format!("`{}` with {}", $js, keys.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", "))
                };
                row(out, $js, &call($js, &[$(stringify!($a)),*], req, opt, false), $doc, &json);
            )*
        }
    };
}
crate::kernel_table!(kernel_rows);

macro_rules! composite_rows {
    ($($e:tt),* $(,)?) => {
        fn composite_rows(out: &mut String) {
            $(composite_rows!(@one out, $e);)*
        }
    };
    (@one $out:ident, ($m:ident, $js:literal, $doc:literal, list [$l:ident],
        [$($f:ident $fk:literal : $ft:ty => $fts:literal),*],
        [$($o:ident $ok:literal : $ot:ty = $od:expr => $ots:literal),*],
        |$g:ident| $body:expr)) => {
        let opt: &[(&str, String)] = &[$(($ok, js_default(stringify!($od)))),*];
        let c = call($js, &["session", stringify!($l)], &[$($fk),*], opt, false);
        row($out, $js, &format!("{c}; `p.{}(nodes, …)`", $js), $doc, "its primitives");
    };
    (@one $out:ident, ($m:ident, $js:literal, $doc:literal, [$($a:ident),*]
        $(or_number [$($n:ident),*])? $(optional [$($q:ident),*])?,
        [$($f:ident $fk:literal : $ft:ty => $fts:literal),*],
        [$($o:ident $ok:literal : $ot:ty = $od:expr => $ots:literal),*] $(-> $res:ident)?,
        |$g:ident| $body:expr)) => {
        let opt: &[(&str, String)] = &[$(($ok, js_default(stringify!($od)))),*];
        let args: &[&str] = &[$(stringify!($a),)* $($(stringify!($n),)*)? $($(concat!(stringify!($q), "?"),)*)?];
        let c = call($js, args, &[$($fk),*], opt, false);
        let c = match stringify!($($res)?) { "many" => format!("{c} → `Tensor[]`"), _ => c };
        row($out, $js, &c, $doc, "its primitives");
    };
}
crate::composite_table!(composite_rows);

/// The op reference as a markdown table (docs/ops.md's): every op of the op table with its JS call,
/// what it does and its JSON form.
pub fn op_reference() -> String {
    let mut out = String::from(
        "| op | call (eager; the program node `p.op(x, …)` takes the same arguments after its inputs) | what | JSON node |\n|---|---|---|---|\n",
    );
    unary_rows(&mut out);
    binary_rows(&mut out);
    reduce_rows(&mut out);
    kernel_rows(&mut out);
    composite_rows(&mut out);
    out
}

#[cfg(test)]
mod tests {
    const START: &str = "<!-- op-reference: generated from src/ops/table.rs; AFFON_BLESS=1 cargo test --lib op_reference -->\n";
    const END: &str = "<!-- /op-reference -->";

    #[test]
    fn op_reference_in_the_readme_is_the_table() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/ops.md");
        let readme = std::fs::read_to_string(path).expect("README.md");
        let (a, b) = (
            readme
                .find(START)
                .expect("the README has the op reference's start marker"),
            readme
                .find(END)
                .expect("the README has the op reference's end marker"),
        );
        let current = &readme[a + START.len()..b];
        let want = super::op_reference();
        if current != want && std::env::var_os("AFFON_BLESS").is_some() {
            let text = format!("{}{want}{}", &readme[..a + START.len()], &readme[b..]);
            std::fs::write(path, text).expect("write README.md");
            return;
        }
        assert_eq!(
            current, want,
            "README's op reference is stale: AFFON_BLESS=1 cargo test --lib op_reference"
        );
    }
}
