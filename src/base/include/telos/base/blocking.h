// BlockingRunner: how a component hands work that may block (password hashing, a database call)
// to a thread that is allowed to block. main wires it to a fixed-size pool; tests may run tasks
// inline. The task must not assume which thread runs it.
#pragma once

#include <functional>

namespace telos {

using BlockingRunner = std::function<void(std::function<void()>)>;

}  // namespace telos
