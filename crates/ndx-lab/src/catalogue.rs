//! The catalogue as real NDN packets: one Name TLV and one Data packet (built with
//! `ndx_codec::DataRepr`, DigestSha256-signed) per chunk, `/lab/c<m>/seg=<k>`, stored
//! contiguously, with the keyed name hash of each chunk.

use ndx_codec::{Data, DataRepr, Name, NameBuf};
use ndx_core::HashKey;

use crate::workload::Request;

/// The L1's hash key in every experiment (fixed: runs are reproducible).
pub const LAB_KEY: HashKey = HashKey::new(0x6c61_6230, 0x6e64_7821);

/// Why the catalogue could not be built.
#[derive(Debug, thiserror::Error)]
pub enum CatalogueError {
    /// The codec refused a name or a Data (cannot happen with the lab's names).
    #[error("encoding chunk {chunk} of content {content}: {source}")]
    Encode {
        /// Content index.
        content: u32,
        /// Chunk index.
        chunk: u32,
        /// The codec's error.
        source: ndx_codec::Error,
    },
}

/// Names (and optionally Data packets) of every chunk of the catalogue.
#[derive(Debug)]
pub struct Catalogue {
    contents: u32,
    chunks_per_content: u32,
    names: Vec<u8>,
    name_off: Vec<u32>,
    hashes: Vec<u64>,
    data: Vec<u8>,
    data_off: Vec<u64>,
    max_data: usize,
}

/// The Data packet of one chunk: `payload` bytes of content (deterministic filler).
pub fn chunk_data(content: u32, chunk: u32, payload: usize) -> Result<Vec<u8>, CatalogueError> {
    let mut repr = DataRepr::new(
        chunk_name(content, chunk),
        vec![(chunk as u8) ^ 0x5a; payload],
    );
    repr.freshness_ms = Some(3_600_000);
    repr.to_vec().map_err(|source| CatalogueError::Encode {
        content,
        chunk,
        source,
    })
}

/// `/lab/c<content>/seg=<chunk>`.
pub fn chunk_name(content: u32, chunk: u32) -> NameBuf {
    let mut n = NameBuf::new();
    n.push_generic(b"lab")
        .push_generic(format!("c{content}").as_bytes())
        .push_segment(u64::from(chunk));
    n
}

impl Catalogue {
    /// Builds names and hashes of every chunk, and, when `payload` is `Some(bytes)`, the Data
    /// packets too (with that much content each).
    pub fn build(
        contents: u32,
        chunks_per_content: u32,
        payload: Option<usize>,
    ) -> Result<Self, CatalogueError> {
        let total = contents as usize * chunks_per_content as usize;
        let mut cat = Self {
            contents,
            chunks_per_content,
            names: Vec::with_capacity(total * 24),
            name_off: Vec::with_capacity(total + 1),
            hashes: Vec::with_capacity(total),
            data: Vec::new(),
            data_off: vec![0],
            max_data: 0,
        };
        cat.name_off.push(0);
        for m in 0..contents {
            for k in 0..chunks_per_content {
                let name = chunk_name(m, k);
                cat.hashes.push(LAB_KEY.name(&name.as_name()));
                cat.names.extend_from_slice(&name.to_tlv());
                cat.name_off.push(cat.names.len() as u32);
                if let Some(p) = payload {
                    let wire = chunk_data(m, k, p)?;
                    cat.max_data = cat.max_data.max(wire.len());
                    cat.data.extend_from_slice(&wire);
                    cat.data_off.push(cat.data.len() as u64);
                }
            }
        }
        Ok(cat)
    }

    /// Number of contents.
    pub fn contents(&self) -> u32 {
        self.contents
    }

    /// Chunks per content.
    pub fn chunks_per_content(&self) -> u32 {
        self.chunks_per_content
    }

    /// Catalogue index of a chunk.
    pub fn index(&self, content: u32, chunk: u32) -> usize {
        Request { content, chunk }.global(self.chunks_per_content) as usize
    }

    /// The Name of chunk `i` (catalogue index), decoded from its TLV.
    pub fn name(&self, i: usize) -> Name<'_> {
        let tlv = &self.names[self.name_off[i] as usize..self.name_off[i + 1] as usize];
        Name::decode(tlv).expect("the catalogue's names are well formed")
    }

    /// The keyed hash (with [`LAB_KEY`]) of chunk `i`'s name.
    pub fn hash(&self, i: usize) -> u64 {
        self.hashes[i]
    }

    /// Whether Data packets were built.
    pub fn has_data(&self) -> bool {
        self.data_off.len() > 1
    }

    /// The Data packet of chunk `i` (empty if built without Data).
    pub fn data_wire(&self, i: usize) -> &[u8] {
        match (self.data_off.get(i), self.data_off.get(i + 1)) {
            (Some(&a), Some(&b)) => &self.data[a as usize..b as usize],
            _ => &[],
        }
    }

    /// The decoded Data packet of chunk `i`.
    pub fn data(&self, i: usize) -> Option<Data<'_>> {
        Data::decode(self.data_wire(i)).ok()
    }

    /// Largest Data packet in bytes.
    pub fn max_data_len(&self) -> usize {
        self.max_data
    }
}
