//! The line of a key path (`grid.cells`, `stroke[1].radius`, `params.dt`) in a scene's TOML
//! text, from the TOML parser's spans rather than a scan of the text, so that every way of
//! writing a key is found: a `[table]` header's keys, a dotted key (`params.dt = 5` at the top
//! level), an inline table (`stroke = [{ radius = 1 }]`), an array of tables (`[[stroke]]`).
//! The kinds whose file structs do not carry `toml::Spanned` values (ink, pool, particles)
//! place their validation errors with it; pbf records spans while converting.

use super::line_of;
use std::ops::Range;
use toml_edit::{ImDocument, Item, Table, TableLike, Value};

/// One step of a key path: a table's key or an array's element.
#[derive(Debug, PartialEq)]
enum Step<'a> {
    Key(&'a str),
    Index(usize),
}

/// `stroke[1].radius` as [Key("stroke"), Index(1), Key("radius")]; `None` for what is not a
/// key path (`--particles`).
fn steps(path: &str) -> Option<Vec<Step<'_>>> {
    let mut steps = Vec::new();
    for part in path.split('.') {
        let (name, mut rest) = part.split_once('[').map_or((part, ""), |(n, r)| (n, r));
        if name.is_empty() || !name.chars().all(|c| c.is_alphanumeric() || c == '_') {
            return None;
        }
        steps.push(Step::Key(name));
        while !rest.is_empty() {
            let (index, after) = rest.split_once(']')?;
            steps.push(Step::Index(index.parse().ok()?));
            rest = after.strip_prefix('[').unwrap_or(after);
        }
    }
    Some(steps)
}

/// Where a lookup stands: the document's items, an array of tables' table, an array's value.
#[derive(Clone, Copy)]
enum Node<'a> {
    Item(&'a Item),
    Table(&'a Table),
    Value(&'a Value),
}

impl<'a> Node<'a> {
    fn table(self) -> Option<&'a dyn TableLike> {
        match self {
            Node::Item(item) => item.as_table_like(),
            Node::Table(table) => Some(table),
            Node::Value(value) => value.as_inline_table().map(|t| t as &dyn TableLike),
        }
    }

    /// Element `k` of an array (of tables) and where it starts.
    fn element(self, k: usize) -> Option<(Option<Range<usize>>, Node<'a>)> {
        match self {
            Node::Item(Item::ArrayOfTables(tables)) => {
                let table = tables.get(k)?;
                Some((table.span(), Node::Table(table)))
            }
            Node::Item(Item::Value(Value::Array(array))) | Node::Value(Value::Array(array)) => {
                let value = array.get(k)?;
                Some((value.span(), Node::Value(value)))
            }
            _ => None,
        }
    }
}

/// The 1-based line of `path` in `text`: where its key is written (a value's key, a table's
/// header or dotted key, an array element's start), or, when the file leaves it out, the
/// line of the nearest enclosing key it does write. `None` when the text does not parse or
/// writes none of the path.
pub fn line_of_key(text: &str, path: &str) -> Option<usize> {
    let document = ImDocument::parse(text).ok()?;
    let mut node = Node::Item(document.as_item());
    let mut offset = None;
    for step in steps(path)? {
        let found = match step {
            Step::Key(key) => node.table().and_then(|table| {
                let (key, item) = table.get_key_value(key)?;
                Some((key.span().or_else(|| item.span()), Node::Item(item)))
            }),
            Step::Index(k) => node.element(k),
        };
        let Some((span, next)) = found else { break };
        offset = span.map(|span| span.start).or(offset);
        node = next;
    }
    offset.map(|start| line_of(text, start))
}

/// The key path (`foam.seed`, `stroke[1].radius`) whose key or value holds byte `offset` of
/// `text`, the innermost one, or else the table holding it: what an error the TOML deserializer
/// reports at a span belongs to (a value of the wrong type: its value; an unknown field: its
/// key; a missing field: its table's header). `None` when the text does not parse or nothing
/// but the document holds the offset.
pub fn key_at(text: &str, offset: usize) -> Option<String> {
    let document = ImDocument::parse(text).ok()?;
    let mut path = String::new();
    in_table(document.as_table(), offset, &mut path).then_some(path)
}

/// Appends to `path` the key of `table` (a table or an inline one) that holds `offset` or
/// whose value does, and that value's own keys down to the innermost; false when none does.
fn in_table(table: &dyn TableLike, offset: usize, path: &mut String) -> bool {
    for (name, _) in table.iter() {
        let Some((key, item)) = table.get_key_value(name) else {
            continue;
        };
        let mark = path.len();
        if !path.is_empty() {
            path.push('.');
        }
        path.push_str(name);
        let on_key = key.span().is_some_and(|span| span.contains(&offset));
        if on_key || in_item(item, offset, path) {
            return true;
        }
        path.truncate(mark);
    }
    false
}

/// Whether `item` holds `offset` (appending its inner keys and indices to `path`).
fn in_item(item: &Item, offset: usize, path: &mut String) -> bool {
    match item {
        Item::Value(value) => in_value(value, offset, path),
        Item::Table(table) => in_table(table, offset, path) || within(table, offset),
        Item::ArrayOfTables(tables) => tables.iter().enumerate().any(|(k, table)| {
            let mark = path.len();
            path.push_str(&format!("[{k}]"));
            let found = in_table(table, offset, path) || within(table, offset);
            if !found {
                path.truncate(mark);
            }
            found
        }),
        Item::None => false,
    }
}

/// Whether `offset` lies in `table` (its header, where a missing field is reported, or a line
/// of it that no key holds).
fn within(table: &Table, offset: usize) -> bool {
    table.span().is_some_and(|span| span.contains(&offset))
}

/// Whether `value`'s span holds `offset` (appending an inline table's keys or an array's index
/// that holds it too).
fn in_value(value: &Value, offset: usize, path: &mut String) -> bool {
    if !value.span().is_some_and(|span| span.contains(&offset)) {
        return false;
    }
    match value {
        Value::InlineTable(table) => {
            in_table(table, offset, path);
        }
        Value::Array(array) => {
            for (k, element) in array.iter().enumerate() {
                let mark = path.len();
                path.push_str(&format!("[{k}]"));
                if in_value(element, offset, path) {
                    break;
                }
                path.truncate(mark);
            }
        }
        _ => {}
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each value's offset gives its key path, the innermost (a table's key, an array of
    /// tables' element, an inline table's key, an array's element); a table's header gives the
    /// table (where a missing field is reported); a comment after a value gives none.
    #[test]
    fn offsets_give_their_key_paths() {
        let text = "kind = \"pbf\"\n[foam]\nseed = -1\n[[fluid]]\nmin = [0, 1]\n[[fluid]]\n\
                    max = [2, 3]\nshape = { radius = 4 }\nparams.dt = 5 # dt\n";
        let at = |needle: &str| key_at(text, text.find(needle).unwrap());
        assert_eq!(at("\"pbf").as_deref(), Some("kind"));
        assert_eq!(at("-1").as_deref(), Some("foam.seed"));
        assert_eq!(at("1]").as_deref(), Some("fluid[0].min[1]"));
        assert_eq!(at("[2").as_deref(), Some("fluid[1].max"));
        assert_eq!(at("3]").as_deref(), Some("fluid[1].max[1]"));
        assert_eq!(at("4 }").as_deref(), Some("fluid[1].shape.radius"));
        assert_eq!(at("5 #").as_deref(), Some("fluid[1].params.dt"));
        assert_eq!(at("seed").as_deref(), Some("foam.seed"));
        assert_eq!(at("radius").as_deref(), Some("fluid[1].shape.radius"));
        assert_eq!(at("[foam]").as_deref(), Some("foam"));
        assert_eq!(at("[[fluid]]\nmax").as_deref(), Some("fluid[1]"));
        assert_eq!(at("# dt"), None);
        assert_eq!(key_at("kind = ", 3), None);
    }

    /// Each way of writing a key gives the line it is written on; a key left out gives its
    /// table's; what the file does not hold gives none.
    #[test]
    fn keys_are_found_on_their_lines() {
        let text =
            "kind = \"ink\"\nparams.dt = 5\n[grid]\n# cells below\ncells = [\n  4,\n  64,\n]\n\
                    width = -1\n[[stroke]]\nradius = 1\n[[stroke]]\nduration = 2\n\
                    radius = 3\n[boundary.sides]\nleft = 1\n";
        let line = |key| line_of_key(text, key);
        assert_eq!(line("kind"), Some(1));
        assert_eq!(line("params.dt"), Some(2));
        assert_eq!(line("params"), Some(2));
        assert_eq!(line("grid"), Some(3));
        assert_eq!(line("grid.cells"), Some(5));
        assert_eq!(line("grid.width"), Some(9));
        assert_eq!(line("grid.ink_scale"), Some(3));
        assert_eq!(line("stroke[0].radius"), Some(11));
        assert_eq!(line("stroke[1]"), Some(12));
        assert_eq!(line("stroke[1].radius"), Some(14));
        assert_eq!(line("stroke[1].start"), Some(12));
        assert_eq!(line("stroke[2].radius"), Some(10));
        assert_eq!(line("boundary.sides.left"), Some(16));
        assert_eq!(line("splat[0].time"), None);
        assert_eq!(line("--particles"), None);
        assert_eq!(line_of_key("kind = ", "kind"), None);
    }

    /// Inline tables and arrays of them: each element's keys on their own lines.
    #[test]
    fn inline_tables_are_found() {
        let text = "kind = \"ink\"\nstroke = [\n  { duration = 1, radius = 0.1 },\n\n  \
                    { duration = 2, radius = -1 },\n]\ngrid = { cells = [4, 64] }\n";
        let line = |key| line_of_key(text, key);
        assert_eq!(line("stroke"), Some(2));
        assert_eq!(line("stroke[0].radius"), Some(3));
        assert_eq!(line("stroke[1]"), Some(5));
        assert_eq!(line("stroke[1].radius"), Some(5));
        assert_eq!(line("stroke[1].start"), Some(5));
        assert_eq!(line("grid.cells"), Some(7));
    }

    #[test]
    fn key_paths_split_into_steps() {
        use Step::{Index, Key};
        assert_eq!(
            steps("stroke[1].path[2]"),
            Some(vec![Key("stroke"), Index(1), Key("path"), Index(2)])
        );
        assert_eq!(steps("a[1][2]"), Some(vec![Key("a"), Index(1), Index(2)]));
        assert_eq!(steps("--particles"), None);
        assert_eq!(steps("a[x]"), None);
    }
}
