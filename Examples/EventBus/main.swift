// Three modules that know nothing of each other react to one global action.
//
//     swift run EventBus

let cart = Cart()
let inbox = Inbox()
var analytics: Analytics? = Analytics()

print("> sign in")
EventBus.post(.signedIn(user: "ada"))

cart.add("tea")
cart.add("biscuits")

print("> analytics is switched off: its listener is freed")
analytics = nil

print("> sign out")
EventBus.post(.signedOut)
