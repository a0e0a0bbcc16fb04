//! Collectors that read the fast fields of matching documents: the trajectory ids of a
//! search, or the message positions of hits within one trajectory.

use tantivy::collector::{Collector, SegmentCollector};
use tantivy::columnar::Column;
use tantivy::{DocId, Score, SegmentOrdinal, SegmentReader};

/// The values of every segment, merged, sorted and without repeats.
fn distinct(fruits: Vec<Vec<u64>>) -> Vec<u64> {
    let mut values: Vec<u64> = fruits.into_iter().flatten().collect();
    values.sort_unstable();
    values.dedup();
    values
}

/// Per segment: the fast-field values of matching documents.
pub(super) struct ValuesOfSegment {
    column: Column<u64>,
    values: Vec<u64>,
}

impl SegmentCollector for ValuesOfSegment {
    type Fruit = Vec<u64>;

    fn collect(&mut self, doc: DocId, _score: Score) {
        if let Some(value) = self.column.first(doc)
            && self.values.last() != Some(&value)
        {
            self.values.push(value);
        }
    }

    fn harvest(self) -> Vec<u64> {
        self.values
    }
}

fn values_of(segment: &SegmentReader, field: &str) -> tantivy::Result<ValuesOfSegment> {
    Ok(ValuesOfSegment {
        column: segment.fast_fields().u64(field)?,
        values: Vec::new(),
    })
}

/// The distinct values of one u64 fast field (`trajectory`, `message`) over the matching
/// documents, sorted.
pub(super) struct DistinctValues(pub(super) &'static str);

impl Collector for DistinctValues {
    type Fruit = Vec<u64>;
    type Child = ValuesOfSegment;

    fn for_segment(
        &self,
        _segment_local_id: SegmentOrdinal,
        segment: &SegmentReader,
    ) -> tantivy::Result<ValuesOfSegment> {
        values_of(segment, self.0)
    }

    fn requires_scoring(&self) -> bool {
        false
    }

    fn merge_fruits(&self, fruits: Vec<Vec<u64>>) -> tantivy::Result<Vec<u64>> {
        Ok(distinct(fruits))
    }
}
