import Foundation
import TestSupport
import Testing

@testable import Barscope

/// A batch of sightings written in one statement (PostgreSQL: many rows a statement) holds each sighting once: a
/// later row of the same run and track updates it as the upsert would.
@Suite(.suiteLimit) struct SightingBatchTests {
    func row(_ track: Int, last: Double, frames: Int, snapshot: String? = nil) -> Sighting {
        Sighting(
            run: "r1", track: track, code: "4006381333931", symbology: "EAN-13", camera: "dock", pipeline: "dock",
            node: "n1", firstSeen: Date(timeIntervalSince1970: 100 + Double(track)),
            lastSeen: Date(timeIntervalSince1970: last), frames: frames, polygon: [Point(1, 2)], snapshot: snapshot)
    }

    @Test func aSightingTwiceInABatchIsOneRowUpdatedInOrder() {
        let merged = SightingIndexes.merged([
            row(1, last: 101, frames: 5), row(2, last: 103, frames: 2),
            row(1, last: 104, frames: 9, snapshot: "a.png"), row(1, last: 106, frames: 12),
        ])
        #expect(merged.map(\.track) == [1, 2])
        #expect(merged[0].firstSeen == Date(timeIntervalSince1970: 101), "the first sight is the first row's")
        #expect(merged[0].lastSeen == Date(timeIntervalSince1970: 106) && merged[0].frames == 12)
        #expect(merged[0].snapshot == "a.png", "a later row without a snapshot keeps the one before")
        #expect(merged[1].lastSeen == Date(timeIntervalSince1970: 103) && merged[1].frames == 2)
    }

    @Test func oneStatementNumbersEveryRowsValues() {
        let sql = SightingIndexes.upsert(rows: 2, placeholder: { "$\($0)" })
        #expect(sql.contains("($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15), ($16,"))
        #expect(sql.contains("$30)") && !sql.contains("$31"))
    }
}
