//! Writing records as parquet, for trainers that read only parquet (verl's RL and SFT data,
//! datasets loaded with `load_dataset("parquet")`). Any export format's JSON records are
//! written column by column: the schema is inferred from all records (strings, 64-bit
//! integers, doubles, booleans, nested objects as structs, arrays as lists; a field whose
//! records disagree on its type is written as JSON text), every field optional, and nested
//! values are shredded into definition and repetition levels with the Apache `parquet`
//! crate's column writers, snappy-compressed.

use parquet::basic::{Compression, ConvertedType, LogicalType, Repetition, Type as Physical};
use parquet::data_type::{BoolType, ByteArray, ByteArrayType, DoubleType, Int64Type};
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::types::{Type, TypePtr};
use serde_json::{Map, Value};
use std::io::Write;
use std::sync::Arc;

/// Rows per row group.
const ROW_GROUP: usize = 50_000;

/// The type of a field, merged over every record.
#[derive(Clone, Debug, PartialEq)]
enum Shape {
    /// Only nulls seen so far.
    Null,
    Bool,
    Int,
    Float,
    Text,
    List(Box<Shape>),
    Struct(Vec<(String, Shape)>),
}

impl Shape {
    fn of(value: &Value) -> Shape {
        match value {
            Value::Null => Shape::Null,
            Value::Bool(_) => Shape::Bool,
            Value::Number(number) if number.is_i64() => Shape::Int,
            Value::Number(_) => Shape::Float,
            Value::String(_) => Shape::Text,
            Value::Array(items) => Shape::List(Box::new(
                items
                    .iter()
                    .fold(Shape::Null, |shape, item| shape.merge(Shape::of(item))),
            )),
            Value::Object(object) => Shape::Struct(
                object
                    .iter()
                    .map(|(key, value)| (key.clone(), Shape::of(value)))
                    .collect(),
            ),
        }
    }

    fn merge(self, other: Shape) -> Shape {
        match (self, other) {
            (Shape::Null, shape) | (shape, Shape::Null) => shape,
            (Shape::Int, Shape::Float) | (Shape::Float, Shape::Int) => Shape::Float,
            (Shape::List(a), Shape::List(b)) => Shape::List(Box::new(a.merge(*b))),
            (Shape::Struct(mut fields), Shape::Struct(more)) => {
                for (key, shape) in more {
                    match fields.iter_mut().find(|(name, _)| *name == key) {
                        Some((_, kept)) => {
                            *kept = std::mem::replace(kept, Shape::Null).merge(shape)
                        }
                        None => fields.push((key, shape)),
                    }
                }
                Shape::Struct(fields)
            }
            (a, b) if a == b => a,
            _ => Shape::Text,
        }
    }

    /// The shape as written: an object with no fields anywhere cannot be a parquet group, so
    /// it is written as JSON text.
    fn settled(self) -> Shape {
        match self {
            Shape::Struct(fields) if fields.is_empty() => Shape::Text,
            Shape::Struct(fields) => Shape::Struct(
                fields
                    .into_iter()
                    .map(|(name, shape)| (name, shape.settled()))
                    .collect(),
            ),
            Shape::List(element) => Shape::List(Box::new(element.settled())),
            other => other,
        }
    }

    /// The parquet type of a field of this shape named `name` (optional, as all are).
    fn parquet_type(&self, name: &str) -> parquet::errors::Result<Type> {
        let primitive = |physical, logical: Option<LogicalType>| {
            Type::primitive_type_builder(name, physical)
                .with_repetition(Repetition::OPTIONAL)
                .with_logical_type(logical)
                .build()
        };
        match self {
            Shape::Bool => primitive(Physical::BOOLEAN, None),
            Shape::Int => primitive(Physical::INT64, None),
            Shape::Float => primitive(Physical::DOUBLE, None),
            Shape::Null | Shape::Text => primitive(Physical::BYTE_ARRAY, Some(LogicalType::String)),
            Shape::List(element) => {
                let list = Type::group_type_builder("list")
                    .with_repetition(Repetition::REPEATED)
                    .with_fields(vec![Arc::new(element.parquet_type("element")?)])
                    .build()?;
                Type::group_type_builder(name)
                    .with_repetition(Repetition::OPTIONAL)
                    .with_converted_type(ConvertedType::LIST)
                    .with_logical_type(Some(LogicalType::List))
                    .with_fields(vec![Arc::new(list)])
                    .build()
            }
            Shape::Struct(fields) => Type::group_type_builder(name)
                .with_repetition(Repetition::OPTIONAL)
                .with_fields(struct_fields(fields)?)
                .build(),
        }
    }

    /// How many leaf columns a field of this shape has.
    fn leaves(&self) -> usize {
        match self {
            Shape::List(element) => element.leaves(),
            Shape::Struct(fields) => fields.iter().map(|(_, shape)| shape.leaves()).sum(),
            _ => 1,
        }
    }
}

fn struct_fields(fields: &[(String, Shape)]) -> parquet::errors::Result<Vec<TypePtr>> {
    fields
        .iter()
        .map(|(name, shape)| shape.parquet_type(name).map(Arc::new))
        .collect()
}

/// A leaf column's values (nulls left out) and its levels.
#[derive(Default)]
struct Column {
    values: Vec<Value>,
    definitions: Vec<i16>,
    repetitions: Vec<i16>,
}

/// Writes the records of `jsonl` (one JSON object per line) as a parquet file to `out`.
pub fn write_parquet(jsonl: &[u8], out: impl Write + Send) -> anyhow::Result<()> {
    let mut rows = Vec::new();
    for (index, line) in jsonl.split(|&byte| byte == b'\n').enumerate() {
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match serde_json::from_slice(line)? {
            Value::Object(row) => rows.push(row),
            _ => anyhow::bail!(
                "record {} is not a JSON object; parquet needs named columns",
                index + 1
            ),
        }
    }
    let shape = rows.iter().fold(Shape::Struct(Vec::new()), |shape, row| {
        shape.merge(Shape::of(&Value::Object(row.clone())))
    });
    let Shape::Struct(fields) = shape else {
        unreachable!("rows are objects");
    };
    let fields: Vec<(String, Shape)> = fields
        .into_iter()
        .map(|(name, shape)| (name, shape.settled()))
        .collect();
    anyhow::ensure!(
        !fields.is_empty() || rows.is_empty(),
        "the records have no fields"
    );
    let schema = Type::group_type_builder("schema")
        .with_fields(struct_fields(&fields)?)
        .build()?;
    let properties = WriterProperties::builder()
        .set_compression(Compression::SNAPPY)
        .build();
    let mut writer = SerializedFileWriter::new(out, Arc::new(schema), Arc::new(properties))?;
    for group in rows.chunks(ROW_GROUP) {
        let mut columns: Vec<Column> = Vec::new();
        columns.resize_with(
            fields.iter().map(|(_, shape)| shape.leaves()).sum(),
            Column::default,
        );
        for row in group {
            let mut leaf = 0;
            for (name, shape) in &fields {
                shred(row.get(name), shape, 0, 0, 0, &mut columns[leaf..]);
                leaf += shape.leaves();
            }
        }
        let mut group_writer = writer.next_row_group()?;
        let leaves: Vec<(&Shape, bool)> = fields
            .iter()
            .flat_map(|(_, shape)| leaf_shapes(shape, false))
            .collect();
        for (column, (shape, in_list)) in columns.into_iter().zip(leaves) {
            let mut column_writer = group_writer
                .next_column()?
                .ok_or_else(|| anyhow::anyhow!("the schema has fewer columns than the records"))?;
            write_column(&mut column_writer, shape, in_list, column)?;
            column_writer.close()?;
        }
        group_writer.close()?;
    }
    writer.close()?;
    Ok(())
}

/// The scalar shapes of a shape's leaves, in column order, each with whether it is inside
/// a list (and so has repetition levels).
fn leaf_shapes(shape: &Shape, in_list: bool) -> Vec<(&Shape, bool)> {
    match shape {
        Shape::List(element) => leaf_shapes(element, true),
        Shape::Struct(fields) => fields
            .iter()
            .flat_map(|(_, shape)| leaf_shapes(shape, in_list))
            .collect(),
        scalar => vec![(scalar, in_list)],
    }
}

/// Shreds one optional value into its leaf columns: `defined` is the definition level of its
/// parent, `repetition` the repetition level its first leaf value gets, `depth` how many
/// lists it is inside.
fn shred(
    value: Option<&Value>,
    shape: &Shape,
    defined: i16,
    repetition: i16,
    depth: i16,
    columns: &mut [Column],
) {
    let value = value.filter(|value| !value.is_null());
    let Some(value) = value else {
        for column in &mut columns[..shape.leaves()] {
            column.definitions.push(defined);
            column.repetitions.push(repetition);
        }
        return;
    };
    match shape {
        Shape::Struct(fields) => {
            let empty = Map::new();
            let object = value.as_object().unwrap_or(&empty);
            let mut leaf = 0;
            for (name, field) in fields {
                shred(
                    object.get(name),
                    field,
                    defined + 1,
                    repetition,
                    depth,
                    &mut columns[leaf..],
                );
                leaf += field.leaves();
            }
        }
        Shape::List(element) => {
            let items = value.as_array().map(Vec::as_slice).unwrap_or(&[]);
            if items.is_empty() {
                for column in &mut columns[..shape.leaves()] {
                    column.definitions.push(defined + 1);
                    column.repetitions.push(repetition);
                }
            }
            for (index, item) in items.iter().enumerate() {
                let item_repetition = if index == 0 { repetition } else { depth + 1 };
                shred(
                    Some(item),
                    element,
                    defined + 2,
                    item_repetition,
                    depth + 1,
                    columns,
                );
            }
        }
        _ => {
            let column = &mut columns[0];
            column.values.push(value.clone());
            column.definitions.push(defined + 1);
            column.repetitions.push(repetition);
        }
    }
}

/// Writes one leaf column's values with its levels.
fn write_column(
    writer: &mut parquet::file::writer::SerializedColumnWriter<'_>,
    shape: &Shape,
    in_list: bool,
    column: Column,
) -> anyhow::Result<()> {
    let definitions = Some(column.definitions.as_slice());
    let repetitions = in_list.then_some(column.repetitions.as_slice());
    match shape {
        Shape::Bool => {
            let values: Vec<bool> = column
                .values
                .iter()
                .map(|value| value.as_bool().unwrap_or(false))
                .collect();
            writer
                .typed::<BoolType>()
                .write_batch(&values, definitions, repetitions)?;
        }
        Shape::Int => {
            let values: Vec<i64> = column
                .values
                .iter()
                .map(|value| value.as_i64().unwrap_or(0))
                .collect();
            writer
                .typed::<Int64Type>()
                .write_batch(&values, definitions, repetitions)?;
        }
        Shape::Float => {
            let values: Vec<f64> = column
                .values
                .iter()
                .map(|value| value.as_f64().unwrap_or(f64::NAN))
                .collect();
            writer
                .typed::<DoubleType>()
                .write_batch(&values, definitions, repetitions)?;
        }
        _ => {
            let values: Vec<ByteArray> = column
                .values
                .iter()
                .map(|value| match value {
                    Value::String(text) => ByteArray::from(text.as_str()),
                    other => ByteArray::from(other.to_string().as_str()),
                })
                .collect();
            writer
                .typed::<ByteArrayType>()
                .write_batch(&values, definitions, repetitions)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use parquet::file::reader::{FileReader, SerializedFileReader};
    use serde_json::json;

    #[test]
    fn nested_lists_structs_nulls_and_empties_read_back_as_written() {
        let rows = [
            json!({"id": 1, "x": 0.5, "ok": true, "tags": ["a", "b"], "grid": [[1, 2], [], [3]],
                   "msg": {"role": "user", "calls": [{"name": "f"}, {"name": "g"}]}}),
            json!({"id": 2, "x": 1, "ok": null, "tags": [], "grid": null,
                   "msg": {"role": "tool", "calls": []}, "mixed": "text"}),
            json!({"id": 3, "tags": null, "grid": [[4]], "mixed": {"k": 1}, "empty": {}}),
        ];
        let jsonl: String = rows.iter().map(|row| format!("{row}\n")).collect();
        let file = tempfile::tempfile().unwrap();
        write_parquet(jsonl.as_bytes(), &file).unwrap();
        let reader = SerializedFileReader::new(file).unwrap();
        let back: Vec<Value> = reader
            .get_row_iter(None)
            .unwrap()
            .map(|row| row.unwrap().to_json_value())
            .collect();
        assert_eq!(back[0]["grid"], json!([[1, 2], [], [3]]));
        assert_eq!(
            back[0]["msg"]["calls"],
            json!([{"name": "f"}, {"name": "g"}])
        );
        assert_eq!(
            back[1]["x"],
            json!(1.0),
            "a column of ints and floats is doubles"
        );
        assert_eq!(back[1]["tags"], json!([]));
        assert_eq!(back[1]["grid"], Value::Null);
        assert_eq!(back[1]["msg"], json!({"role": "tool", "calls": []}));
        assert_eq!(back[1]["mixed"], json!("text"));
        assert_eq!(
            back[2]["mixed"],
            json!("{\"k\":1}"),
            "disagreeing types are JSON text"
        );
        assert_eq!(back[2]["empty"], json!("{}"));
        assert_eq!(back[2]["tags"], Value::Null);
        assert_eq!(back[2]["grid"], json!([[4]]));
        assert_eq!(back[2]["ok"], Value::Null);
    }
}
