//! Prints the claims each line of standard input is read into: a tool for reading what the
//! claims reader makes of real text (`cargo run -p arbor-domain --example claims < notes.txt`).

use std::io::BufRead;

fn main() {
    for line in std::io::stdin().lock().lines().map_while(Result::ok) {
        if line.trim().is_empty() {
            continue;
        }
        let reading = arbor_domain::claims::read(&line);
        println!("{line}");
        for claim in &reading.claims {
            println!("  + {} | {} | {:?} | {:?}", claim.subject.key, claim.attribute, claim.value, claim.polarity);
        }
        for (claim, hold) in &reading.held {
            println!(
                "  ~ {} | {} | {:?} | {:?} ({hold:?})",
                claim.subject.key, claim.attribute, claim.value, claim.polarity
            );
        }
        if reading.says_more() {
            println!("  (says more: {} words)", reading.unclaimed_words);
        }
    }
}
