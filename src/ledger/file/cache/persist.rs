//! Keeping the cache: the checkpoint written after a write, and the merge
//! of the entries after the base into a new base, with the summary carried
//! over to it.

use super::*;

impl Cache {
    /// Writes the checkpoint (merging into a new base first when the
    /// entries after the base are many). A failure leaves a stale or
    /// missing cache, which the next command notices: it never fails the
    /// command that wrote the ledger.
    pub(crate) fn save(&mut self) {
        if !self.dirty {
            return;
        }
        if failpoint::hit("cache.before_save").is_err() {
            return;
        }
        if self.delta.len() > failpoint::merge_at(MERGE_AT) {
            self.remove_leftovers();
        }
        if self.delta.len() > failpoint::merge_at(MERGE_AT) && self.merge().is_err() {
            return;
        }
        if self.write_checkpoint().is_ok() {
            self.dirty = false;
        }
    }

    fn write_checkpoint(&mut self) -> io::Result<()> {
        self.global.forget_old_reservations();
        // Under the lock, after the last write: the ledger's ctime now.
        let ledger = std::fs::metadata(&self.path)?;
        // Taken for the writing and put back: a copy of each would be an
        // allocation per discussion of the live set, per command.
        let body = CheckpointBody {
            dev: self.dev,
            ino: self.ino,
            ledger_ctime: (ledger.ctime(), ledger.ctime_nsec()),
            mark: self.mark,
            last_at_ms: self.last_at_ms,
            global: std::mem::take(&mut self.global),
            live: std::mem::take(&mut self.live),
            base: self.base,
            entries: self.delta.len() as u64,
        };
        let json = serde_json::to_vec(&body);
        (self.global, self.live) = (body.global, body.live);
        let json = json.map_err(io::Error::other)?;
        let ids = self.new_ids.as_bytes();
        let mut rest = Vec::with_capacity(8 + json.len() + self.delta.len() * ENTRY + ids.len());
        rest.extend_from_slice(&(json.len() as u64).to_le_bytes());
        rest.extend_from_slice(&json);
        for entry in &self.delta {
            rest.extend_from_slice(&entry.to_bytes());
        }
        rest.extend_from_slice(ids);
        let mut bytes = Vec::with_capacity(16 + rest.len());
        bytes.extend_from_slice(CHECKPOINT_MAGIC);
        bytes.extend_from_slice(&hash64(&rest).to_le_bytes());
        bytes.extend_from_slice(&rest);
        let target = Cache::checkpoint_path(&self.path);
        if rewrite_in_place(&target, &bytes)? {
            return Ok(());
        }
        let mut temp = temporary_beside(&target)?;
        temp.write_all(&bytes)?;
        temp.persist(&target).map_err(|e| e.error)?;
        Ok(())
    }

    /// A new base: the old one's entries and ids merged with the newer.
    fn merge(&mut self) -> io::Result<()> {
        let old_summary = self.summary_base();
        let ids = self
            .discussion_ids()
            .map_err(|Damaged| io::Error::other("the base's ids are damaged"))?;
        let mut delta = std::mem::take(&mut self.delta);
        delta.sort_unstable_by_key(|e| (e.key, e.offset));
        let old = self.base_file.take();
        let old_entries = self.base.entries;
        let stream = BaseStream::new(old.as_ref(), (old_entries, self.entries_hash));
        let merged = MergeSorted {
            a: stream.peekable(),
            b: delta.iter().copied().peekable(),
        };
        let total = old_entries + delta.len() as u64;
        match write_base(
            &self.path, self.dev, self.ino, &self.mark, merged, total, &ids,
        ) {
            Ok(base) => {
                self.use_base(base);
                let touched = std::mem::take(&mut self.new_ids);
                if let Some(old_summary) = old_summary {
                    // Without it the next reader of many discussions
                    // writes one: a failure costs speed only.
                    let _ = self.carry_summary(old_summary, &touched.sorted());
                }
                Ok(())
            }
            Err(err) => {
                self.base_file = old;
                self.delta = delta;
                Err(err)
            }
        }
    }

    /// The summary of the new base: the old base's lines, with those of
    /// the discussions the merge `touched` summarized again.
    fn carry_summary(&self, old_base: u64, touched: &BTreeSet<&str>) -> io::Result<()> {
        let Some(summarize) = self.summarize else {
            return Ok(());
        };
        let Some(new_base) = self.summary_base() else {
            return Ok(());
        };
        let ledger = File::open(&self.path)?;
        let mut fresh: Vec<(String, Summary)> = Vec::with_capacity(touched.len());
        for id in touched {
            let summary = self
                .with_records(&ledger, id, |records| summarize(id, records))
                .map_err(|_| io::Error::other("the new base is damaged"))?;
            fresh.extend(summary.map(|summary| (id.to_string(), summary)));
        }
        let mut writer = SummaryWriter::new(&self.path, new_base)?;
        let mut fresh = fresh.into_iter().peekable();
        let mut failed: Option<io::Error> = None;
        summary::read(&self.path, old_base, |id, settled_from_ms, row| {
            let mut push = |id: &str, summary: &Summary| {
                if let Err(err) = writer.push(id, summary) {
                    failed.get_or_insert(err);
                }
            };
            while let Some((next, summary)) = fresh.next_if(|(next, _)| next.as_str() <= id) {
                push(&next, &summary);
            }
            if !touched.contains(id) {
                let row = row.to_owned();
                push(
                    id,
                    &Summary {
                        settled_from_ms,
                        row,
                    },
                );
            }
            Ok(())
        })
        .map_err(|_| io::Error::other("the old summary cannot be trusted"))?;
        for (id, summary) in fresh {
            writer.push(&id, &summary)?;
        }
        if let Some(err) = failed {
            return Err(err);
        }
        writer.finish()
    }
}
