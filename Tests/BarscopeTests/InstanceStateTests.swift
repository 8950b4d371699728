import Foundation
import TestSupport
import Testing

@testable import Barscope

/// One vocabulary for a pipeline's state on every channel: the controller's states map onto it, and the OpenAPI
/// document lists exactly its words.
@Suite(.suiteLimit) struct InstanceStateTests {
    @Test func everyControllerStateIsSaidInTheOneVocabulary() {
        let said: [(ControllerState, Bool, InstanceState)] = [
            (.idle, false, .starting), (.starting, false, .starting), (.playing, false, .playing),
            (.paused, false, .paused), (.restarting(attempt: 2), false, .reconnecting), (.failed("x"), true, .failed),
            (.stopped, true, .stopped), (.stopped, false, .completed),
        ]
        for (state, asked, word) in said {
            #expect(state.said(stopRequested: asked) == word, "\(state), stop asked: \(asked)")
        }
        #expect(Set(said.map(\.2)) == Set(InstanceState.allCases), "every word is said by some state")
    }

    @Test func theOpenAPIDocumentListsTheSameWords() throws {
        let document = try JSONSerialization.jsonObject(with: Data(ServiceRoutes.openAPI)) as? [String: Any]
        let schemas = (document?["components"] as? [String: Any])?["schemas"] as? [String: Any] ?? [:]
        let lists = schemas.values.compactMap { schema -> [String]? in
            let state = ((schema as? [String: Any])?["properties"] as? [String: Any])?["state"] as? [String: Any]
            return state?["enum"] as? [String]
        }
        try #require(!lists.isEmpty, "no schema with a state enum")
        for list in lists { #expect(list == InstanceState.allCases.map(\.rawValue)) }
    }
}
