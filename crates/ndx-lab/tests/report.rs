//! Output: CSV, aligned table, grouping of series, files written.

use ndx_lab::report::{self, Table};

#[test]
fn csv_table_grouping_and_files() {
    let mut t = Table::new(&["series", "x", "y"]);
    for (s, x, y) in [("b", 1, 10), ("a", 1, 11), ("b", 2, 20), ("a", 2, 21)] {
        t.push(vec![s.into(), x.to_string(), y.to_string()]);
    }
    t.group_by(&[0]);
    assert_eq!(t.to_csv(), "series,x,y\na,1,11\na,2,21\nb,1,10\nb,2,20\n");
    let text = t.render();
    assert_eq!(text.lines().count(), 5);
    assert!(
        text.lines().all(|l| l.len() == "series  x   y".len()),
        "{text}"
    );
    let dir = std::env::temp_dir().join(format!("ndx-lab-report-{}", std::process::id()));
    let (csv, gp) = report::write(&dir, "demo", &t, "plot 'demo.csv' using 2:3").expect("write");
    assert_eq!(std::fs::read_to_string(&csv).expect("csv"), t.to_csv());
    let script = std::fs::read_to_string(&gp).expect("gp");
    assert!(script.contains("set output 'demo.svg'") && script.contains("plot 'demo.csv'"));
    std::fs::remove_dir_all(&dir).expect("cleanup");
}
