//! The bound of the journal's backlogs.

use super::*;

#[test]
fn a_journal_with_too_many_held_records_or_unwritten_jobs_is_behind() {
    let journal = Journal::new(PathBuf::from("/nonexistent/journal"), None, 0);
    assert!(!journal.behind());
    let record = Record::new("http://a.test/".into(), 0);
    for _ in 0..HELD_LIMIT {
        journal.held.borrow_mut().push_back(Held {
            jobs: 0,
            warc: 0,
            record: record.clone(),
        });
    }
    assert!(!journal.behind(), "at the limit");
    journal.held.borrow_mut().push_back(Held {
        jobs: 0,
        warc: 0,
        record,
    });
    assert!(journal.behind(), "past the limit of held records");
    journal.held.borrow_mut().clear();
    let job = Job::root("http://a.test/x".into(), 0);
    journal
        .jobs
        .borrow_mut()
        .extend(std::iter::repeat_n(job, JOBS_LIMIT + 1));
    assert!(journal.behind(), "past the limit of unwritten jobs");
    journal.jobs.borrow_mut().clear();
    assert!(!journal.behind(), "caught up");
}
