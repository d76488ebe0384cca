//! Evaluating HCL expressions with terraform's semantics.
//!
//! The syntax tree comes from `hcl-edit`, whose number literals keep their
//! source text, so `123456789012345678901234567890` is not squeezed through
//! a float64 before we see it. This module evaluates literals, templates
//! (interpolation, `%{if}` and `%{for}` directives, strip markers,
//! heredocs), operators, conditionals, `for` expressions with filters and
//! grouping, splats, attribute and index access, and function calls
//! (including the expression-taking `try` and `can`). Unknown values flow
//! through every construct as an unknown of the right type; the sensitive
//! mark flows to every result computed from a sensitive value.

use super::error::{EvalError, Result};
use super::funcs;
use crate::value::convert::{convert, unify};
use crate::value::number::Number;
use crate::value::{Kind, Type, Value};
use hcl_edit::expr::{BinaryOperator, Expression, ObjectKey, TraversalOperator, UnaryOperator};
use hcl_edit::template::{Directive, Element, Strip, Template};
use hcl_edit::{Decorated, Span};
use std::collections::BTreeMap;

/// The names an expression can refer to. Console expressions start with an
/// empty scope; `for` expressions and template `for` directives bind their
/// iteration variables in child scopes.
#[derive(Clone, Default)]
pub struct Scope {
    vars: BTreeMap<String, Value>,
    /// Evaluating a template function's template, where the template
    /// functions may not be called again.
    in_template: bool,
    /// Evaluating a `templatestring` template, which may not read files.
    refuse_files: bool,
    /// What the impure functions answer.
    phase: funcs::Phase,
}

impl Scope {
    pub fn with(&self, name: &str, v: Value) -> Scope {
        let mut s = self.clone();
        s.vars.insert(name.to_string(), v);
        s
    }

    /// This scope in `phase`.
    pub fn in_phase(mut self, phase: funcs::Phase) -> Scope {
        self.phase = phase;
        self
    }

    /// This scope for a template function's template; `refuse_files`
    /// for a `templatestring` template.
    pub(crate) fn in_template(mut self, refuse_files: bool) -> Scope {
        self.in_template = true;
        self.refuse_files = refuse_files;
        self
    }

    /// Evaluates a whole template: a lone interpolation keeps its value's
    /// type, anything else renders to a string.
    pub(crate) fn eval_template(&self, t: &Template) -> Result<Value> {
        self.template(t)
    }

    pub fn eval(&self, e: &Expression) -> Result<Value> {
        use hcl_edit::Span;
        self.eval_inner(e).map_err(|d| d.or_span(e.span()))
    }

    fn eval_inner(&self, e: &Expression) -> Result<Value> {
        match e {
            Expression::Null(_) => Ok(Value::null(Type::Dynamic)),
            Expression::Bool(b) => Ok(Value::bool(*b.value())),
            Expression::Number(n) => number_literal(n),
            Expression::String(s) => Ok(Value::string(s.value().clone())),
            Expression::Array(a) => Ok(Value::tuple(
                a.iter().map(|e| self.eval(e)).collect::<Result<_>>()?,
            )),
            Expression::Object(o) => {
                let mut out = BTreeMap::new();
                for (k, v) in o.iter() {
                    let key = match k {
                        ObjectKey::Ident(i) => i.as_str().to_string(),
                        ObjectKey::Expression(e) => self.object_key(e)?,
                    };
                    out.insert(key, self.eval(v.expr())?);
                }
                Ok(Value::object(out))
            }
            Expression::StringTemplate(t) => self.template(t),
            Expression::HeredocTemplate(h) => self.template(&h.template),
            Expression::Parenthesis(p) => self.eval(p.inner()),
            Expression::Variable(v) => self.variable(v.as_str()),
            Expression::Conditional(c) => {
                self.conditional(&c.cond_expr, &c.true_expr, &c.false_expr)
            }
            Expression::FuncCall(f) => self.call(f),
            Expression::Traversal(t) => {
                let base = self.traversal_root(&t.expr, &t.operators)?;
                let ops: Vec<&Decorated<TraversalOperator>> = t.operators.iter().collect();
                self.traverse(base, &ops)
            }
            Expression::UnaryOp(u) => {
                let v = self.eval(&u.expr)?;
                unary(*u.operator.value(), v)
            }
            Expression::BinaryOp(b) => {
                let l = self.eval(&b.lhs_expr)?;
                let r = self.eval(&b.rhs_expr)?;
                binary(*b.operator.value(), l, r).map_err(|d| {
                    // An unsuitable operand is blamed alone.
                    let side = if d.detail.contains("right operand") {
                        b.rhs_expr.span()
                    } else if d.detail.contains("left operand") {
                        b.lhs_expr.span()
                    } else {
                        None
                    };
                    d.or_span(side)
                })
            }
            Expression::ForExpr(f) => self.for_expr(f),
        }
    }

    fn object_key(&self, e: &Expression) -> Result<String> {
        if let Expression::Variable(v) = e {
            return Ok(v.as_str().to_string());
        }
        let k = self.eval(e)?;
        if k.is_null() {
            return Err(EvalError::new(
                "Null value as key",
                "Can't use a null value as a key.",
            ));
        }
        match convert(k, &Type::String) {
            Ok(v) => Ok(v.as_str().unwrap_or_default().to_string()),
            Err(e) => Err(EvalError::new(
                "Incorrect key type",
                format!("Can't use this value as a key: {}.", e.message),
            )),
        }
    }

    fn variable(&self, name: &str) -> Result<Value> {
        if let Some(v) = self.vars.get(name) {
            return Ok(v.clone());
        }
        Err(match name {
            "var" | "local" | "module" | "data" | "path" | "terraform" | "count" | "each" | "self" => {
                EvalError::new("Invalid reference", format!("The \"{name}\" object cannot be accessed directly. Instead, access one of its attributes."))
            }
            _ => EvalError::new(
                "Invalid reference",
                "A reference to a resource type must be followed by at least one attribute access, specifying the resource name.",
            ),
        })
    }

    /// The value a traversal starts from; references to a root's objects
    /// are diagnosed here, since the console evaluates without a root.
    fn traversal_root(
        &self,
        base: &Expression,
        ops: &[hcl_edit::Decorated<TraversalOperator>],
    ) -> Result<Value> {
        if let Expression::Variable(v) = base {
            if !self.vars.contains_key(v.as_str()) {
                let attr = match ops.first().map(|o| o.value()) {
                    Some(TraversalOperator::GetAttr(a)) => Some(a.as_str().to_string()),
                    _ => None,
                };
                if let Some(attr) = attr {
                    return Err(match v.as_str() {
                        "var" => EvalError::new(
                            "Reference to undeclared input variable",
                            format!("An input variable with the name \"{attr}\" has not been declared. This variable can be declared with a variable \"{attr}\" {{}} block."),
                        ),
                        "local" => EvalError::new(
                            "Reference to undeclared local value",
                            format!("A local value with the name \"{attr}\" has not been declared."),
                        ),
                        _ => EvalError::new(
                            "Reference to undeclared resource",
                            format!("A managed resource \"{}\" \"{attr}\" has not been declared in the root module.", v.as_str()),
                        ),
                    });
                }
            }
        }
        self.eval(base)
    }

    fn traverse(&self, mut v: Value, ops: &[&Decorated<TraversalOperator>]) -> Result<Value> {
        let mut i = 0;
        while i < ops.len() {
            let at = || ops[i].span();
            match ops[i].value() {
                TraversalOperator::GetAttr(a) => {
                    v = get_attr(v, a.as_str()).map_err(|d| d.or_span(at()))?
                }
                TraversalOperator::Index(e) => {
                    let k = self.eval(e)?;
                    v = index(v, k).map_err(|d| d.or_span(at()))?;
                }
                TraversalOperator::LegacyIndex(n) => {
                    v = index(v, Value::int(*n.value() as i64)).map_err(|d| d.or_span(at()))?
                }
                TraversalOperator::FullSplat(_) | TraversalOperator::AttrSplat(_) => {
                    let full = matches!(ops[i].value(), TraversalOperator::FullSplat(_));
                    let mut j = i + 1;
                    while j < ops.len() {
                        let inner = match ops[j].value() {
                            TraversalOperator::GetAttr(_) => true,
                            TraversalOperator::Index(_) | TraversalOperator::LegacyIndex(_) => full,
                            _ => false,
                        };
                        if !inner {
                            break;
                        }
                        j += 1;
                    }
                    v = self.splat(v, &ops[i + 1..j])?;
                    i = j;
                    continue;
                }
            }
            i += 1;
        }
        Ok(v)
    }

    fn splat(&self, v: Value, ops: &[&Decorated<TraversalOperator>]) -> Result<Value> {
        let sensitive = v.sensitive;
        let out = match v.kind {
            Kind::Null(_) => Value::tuple(vec![]),
            Kind::Unknown(_) => Value::unknown(Type::Dynamic),
            Kind::Tuple(e) => Value::tuple(
                e.into_iter()
                    .map(|x| self.traverse(x, ops))
                    .collect::<Result<_>>()?,
            ),
            Kind::List(ety, e) | Kind::Set(ety, e) => {
                let vals: Vec<Value> = e
                    .into_iter()
                    .map(|x| self.traverse(x, ops))
                    .collect::<Result<_>>()?;
                let ety = match vals.first() {
                    Some(f) => f.ty(),
                    None => self
                        .traverse(Value::unknown(ety), ops)
                        .map(|x| x.ty())
                        .unwrap_or(Type::Dynamic),
                };
                Value::list(ety, vals)
            }
            kind => Value::tuple(vec![self.traverse(
                Value {
                    kind,
                    sensitive: false,
                },
                ops,
            )?]),
        };
        Ok(out.with_sensitive(sensitive))
    }

    /// HCL's conditional: both results are evaluated, but only the chosen
    /// one's errors count (neither's while the condition is unknown); a
    /// result that failed stands as an unknown of any type meanwhile.
    fn conditional(&self, c: &Expression, t: &Expression, f: &Expression) -> Result<Value> {
        let tr = self.eval(t);
        let fr = self.eval(f);
        let failed = || Value::unknown(Type::Dynamic);
        let tv = tr.as_ref().map_or_else(|_| failed(), Value::clone);
        let fv = fr.as_ref().map_or_else(|_| failed(), Value::clone);
        // HCL blames the two results together, or the condition.
        let results = t.span().zip(f.span()).map(|(a, b)| a.start..b.end);
        let Some(ty) = unify(&[tv.ty(), fv.ty()]) else {
            return Err(EvalError::new(
                "Inconsistent conditional result types",
                format!(
                    "The true and false result expressions must have consistent types. The 'true' value is {}, but the 'false' value is {}.",
                    tv.ty().friendly_name(),
                    fv.ty().friendly_name()
                ),
            )
            .or_span(results));
        };
        let cond = self.eval(c)?;
        if cond.is_null() {
            return Err(EvalError::new(
                "Null condition",
                "The condition value is null. Conditions must either be true or false.",
            )
            .or_span(c.span()));
        }
        let sensitive = cond.sensitive;
        let cond = convert(cond, &Type::Bool).map_err(|_| {
            EvalError::new(
                "Incorrect condition type",
                "The condition expression must be of type bool.",
            )
            .or_span(c.span())
        })?;
        let Some(b) = cond.as_bool() else {
            return Ok(Value::unknown(ty).with_sensitive(sensitive));
        };
        let chosen = if b { tr? } else { fr? };
        let out = convert(chosen, &ty).map_err(|e| {
            EvalError::new(
                "Inconsistent conditional result types",
                format!(
                    "The {} result value is not compatible: {}.",
                    if b { "true" } else { "false" },
                    e.message
                ),
            )
            .or_span(if b { t.span() } else { f.span() })
        })?;
        Ok(out.with_sensitive(sensitive))
    }

    fn template(&self, t: &Template) -> Result<Value> {
        let elems: Vec<&Element> = t.iter().collect();
        if let [Element::Interpolation(i)] = elems.as_slice() {
            return self.eval(&i.expr);
        }
        self.render(&elems, false, false)
    }

    /// Renders template elements to one string, applying strip markers.
    /// `trim_first` and `trim_last` strip the body's outer whitespace when
    /// the enclosing directive's markers ask for it.
    fn render(&self, elems: &[&Element], trim_first: bool, trim_last: bool) -> Result<Value> {
        let mut out = String::new();
        let mut sensitive = false;
        let mut unknown = false;
        let mut strip_next = trim_first;
        for (n, el) in elems.iter().enumerate() {
            let strip_before = |s: &Strip| matches!(s, Strip::Start | Strip::Both);
            let next_strips = match elems.get(n + 1) {
                Some(Element::Interpolation(i)) => strip_before(&i.strip),
                Some(Element::Directive(d)) => match d.as_ref() {
                    Directive::If(i) => strip_before(&i.if_expr.strip),
                    Directive::For(f) => strip_before(&f.for_expr.strip),
                },
                Some(_) => false,
                None => trim_last,
            };
            match el {
                Element::Literal(s) => {
                    let mut s: &str = s.value();
                    if strip_next {
                        s = s.trim_start();
                    }
                    if next_strips {
                        s = s.trim_end();
                    }
                    out.push_str(s);
                    strip_next = false;
                }
                Element::Interpolation(i) => {
                    let v = self.eval(&i.expr)?;
                    match self.interpolate(v).map_err(|d| d.or_span(i.expr.span()))? {
                        Some(v) => {
                            sensitive |= v.sensitive;
                            match v.as_str() {
                                Some(s) => out.push_str(s),
                                None => unknown = true,
                            }
                        }
                        None => unknown = true,
                    }
                    strip_next = matches!(i.strip, Strip::End | Strip::Both);
                }
                Element::Directive(d) => {
                    let (v, strip_after) = self.directive(d)?;
                    sensitive |= v.sensitive;
                    match v.as_str() {
                        Some(s) => out.push_str(s),
                        None => unknown = true,
                    }
                    strip_next = strip_after;
                }
            }
        }
        let v = if unknown {
            Value::unknown(Type::String)
        } else {
            Value::string(out)
        };
        Ok(v.with_sensitive(sensitive))
    }

    /// Converts an interpolated value to string; `None` for an unknown.
    fn interpolate(&self, v: Value) -> Result<Option<Value>> {
        if v.is_null() {
            return Err(EvalError::new(
                "Invalid template interpolation value",
                "The expression result is null. Cannot include a null value in a string template.",
            ));
        }
        if !v.is_known() {
            return Ok(Some(
                Value::unknown(Type::String).with_sensitive(v.sensitive),
            ));
        }
        convert(v, &Type::String).map(Some).map_err(|e| {
            EvalError::new(
                "Invalid template interpolation value",
                format!(
                    "Cannot include the given value in a string template: {}.",
                    e.message
                ),
            )
        })
    }

    fn directive(&self, d: &Directive) -> Result<(Value, bool)> {
        let strip_end = |s: &Strip| matches!(s, Strip::End | Strip::Both);
        match d {
            Directive::If(i) => {
                let c = self.eval(&i.if_expr.cond_expr)?;
                let at = i.if_expr.cond_expr.span();
                if c.is_null() {
                    return Err(EvalError::new(
                        "Null condition",
                        "The condition value is null. Conditions must either be true or false.",
                    )
                    .or_span(at));
                }
                let sensitive = c.sensitive;
                // HCL renders an if directive as a conditional expression,
                // and words its errors so.
                let c = convert(c, &Type::Bool).map_err(|_| {
                    EvalError::new(
                        "Incorrect condition type",
                        "The condition expression must be of type bool.",
                    )
                    .or_span(at.clone())
                })?;
                let after = strip_end(&i.endif_expr.strip);
                let Some(b) = c.as_bool() else {
                    return Ok((
                        Value::unknown(Type::String).with_sensitive(sensitive),
                        after,
                    ));
                };
                let empty = Template::new();
                let starts = |s: &Strip| matches!(s, Strip::Start | Strip::Both);
                let endif_trims = starts(&i.endif_expr.strip);
                let (body, first, last) = match (b, &i.else_expr) {
                    (true, Some(e)) => (
                        &i.if_expr.template,
                        strip_end(&i.if_expr.strip),
                        starts(&e.strip),
                    ),
                    (true, None) => (
                        &i.if_expr.template,
                        strip_end(&i.if_expr.strip),
                        endif_trims,
                    ),
                    (false, Some(e)) => (&e.template, strip_end(&e.strip), endif_trims),
                    (false, None) => (&empty, false, false),
                };
                let elems: Vec<&Element> = body.iter().collect();
                Ok((
                    self.render(&elems, first, last)?.with_sensitive(sensitive),
                    after,
                ))
            }
            Directive::For(f) => {
                let fe = &f.for_expr;
                let coll = self.eval(&fe.collection_expr)?;
                let after = strip_end(&f.endfor_expr.strip);
                let items = iteration(&coll).map_err(|d| d.or_span(fe.collection_expr.span()))?;
                let Some(items) = items else {
                    return Ok((
                        Value::unknown(Type::String).with_sensitive(coll.sensitive),
                        after,
                    ));
                };
                let elems: Vec<&Element> = fe.template.iter().collect();
                let first = strip_end(&fe.strip);
                let last = matches!(f.endfor_expr.strip, Strip::Start | Strip::Both);
                let mut out = String::new();
                let mut sensitive = coll.sensitive;
                let mut unknown = false;
                for (k, v) in items {
                    let mut scope = self.with(fe.value_var.as_str(), v);
                    if let Some(kv) = &fe.key_var {
                        scope = scope.with(kv.as_str(), k);
                    }
                    let r = scope.render(&elems, first, last)?;
                    sensitive |= r.sensitive;
                    match r.as_str() {
                        Some(s) => out.push_str(s),
                        None => unknown = true,
                    }
                }
                let v = if unknown {
                    Value::unknown(Type::String)
                } else {
                    Value::string(out)
                };
                Ok((v.with_sensitive(sensitive), after))
            }
        }
    }

    fn for_expr(&self, f: &hcl_edit::expr::ForExpr) -> Result<Value> {
        let coll = self.eval(&f.intro.collection_expr)?;
        let Some(items) =
            iteration(&coll).map_err(|d| d.or_span(f.intro.collection_expr.span()))?
        else {
            return Ok(Value::unknown(Type::Dynamic).with_sensitive(coll.sensitive));
        };
        let sensitive = coll.sensitive;
        let mut tuple = Vec::new();
        let mut object: BTreeMap<String, Value> = BTreeMap::new();
        let mut groups: BTreeMap<String, Vec<Value>> = BTreeMap::new();
        for (k, v) in items {
            let mut scope = self.with(f.intro.value_var.as_str(), v);
            if let Some(kv) = &f.intro.key_var {
                scope = scope.with(kv.as_str(), k);
            }
            if let Some(c) = &f.cond {
                let cv = scope.eval(&c.expr)?;
                if cv.is_null() {
                    return Err(EvalError::new(
                        "Condition is null",
                        "The value of the 'if' clause must not be null.",
                    ));
                }
                let cv = convert(cv, &Type::Bool).map_err(|e| {
                    EvalError::new(
                        "Invalid 'for' condition",
                        format!("The 'if' clause value is invalid: {}.", e.message),
                    )
                })?;
                match cv.as_bool() {
                    Some(true) => {}
                    Some(false) => continue,
                    None => return Ok(Value::unknown(Type::Dynamic).with_sensitive(sensitive)),
                }
            }
            let value = scope.eval(&f.value_expr)?;
            match &f.key_expr {
                None => tuple.push(value),
                Some(ke) => {
                    let key = scope.eval(ke)?;
                    if key.is_null() {
                        return Err(EvalError::new(
                            "Invalid object key",
                            "Key expression in 'for' expression must not produce a null value.",
                        ));
                    }
                    if !key.is_known() {
                        return Ok(Value::unknown(Type::Dynamic).with_sensitive(sensitive));
                    }
                    let key = convert(key, &Type::String).map_err(|e| {
                        EvalError::new(
                            "Invalid object key",
                            format!("The object key is invalid: {}.", e.message),
                        )
                    })?;
                    let key = key.as_str().unwrap_or_default().to_string();
                    if f.grouping {
                        groups.entry(key).or_default().push(value);
                    } else {
                        match object.entry(key) {
                            std::collections::btree_map::Entry::Occupied(e) => {
                                return Err(EvalError::new(
                                    "Duplicate object key",
                                    format!("Two different items produced the key {:?} in this 'for' expression. If duplicates are expected, use the ellipsis (...) after the value expression to enable grouping by key.", e.key()),
                                ));
                            }
                            std::collections::btree_map::Entry::Vacant(e) => {
                                e.insert(value);
                            }
                        }
                    }
                }
            }
        }
        let out = match &f.key_expr {
            None => Value::tuple(tuple),
            Some(_) if f.grouping => Value::object(
                groups
                    .into_iter()
                    .map(|(k, v)| (k, Value::tuple(v)))
                    .collect(),
            ),
            Some(_) => Value::object(object),
        };
        Ok(out.with_sensitive(sensitive))
    }

    fn call(&self, f: &hcl_edit::expr::FuncCall) -> Result<Value> {
        let name = if f.name.is_namespaced() {
            let ns: Vec<&str> = f.name.namespace.iter().map(|n| n.as_str()).collect();
            format!("{}::{}", ns.join("::"), f.name.name.as_str())
        } else {
            f.name.name.as_str().to_string()
        };
        let exprs: Vec<&Expression> = f.args.iter().collect();
        let plain = name.strip_prefix("core::").unwrap_or(&name);
        match plain {
            "try" => return self.try_(&exprs),
            "can" => return self.can(&exprs),
            _ => {}
        }
        // From the name to the opening parenthesis, which follows the name
        // directly, as HCL blames a call.
        let start = f
            .name
            .namespace
            .first()
            .and_then(|n| n.span())
            .or_else(|| f.name.name.span());
        let site = funcs::CallSite {
            name: start
                .clone()
                .zip(f.name.name.span())
                .map(|(s, n)| s.start..n.end),
            call: start
                .zip(f.name.name.span())
                .map(|(s, n)| s.start..n.end + 1),
            args: exprs.iter().map(|e| e.span()).collect(),
            phase: self.phase.clone(),
        };
        if plain == "templatestring" && !self.in_template {
            return self.template_string(&name, &exprs, &site);
        }
        let mut args: Vec<Value> = exprs.iter().map(|e| self.eval(e)).collect::<Result<_>>()?;
        if f.args.expand_final() {
            let last = args.pop().unwrap_or_else(|| Value::null(Type::Dynamic));
            match last.kind {
                Kind::List(_, e) | Kind::Set(_, e) | Kind::Tuple(e) => {
                    args.extend(e.into_iter().map(|x| x.with_sensitive(last.sensitive)))
                }
                Kind::Unknown(_) => return Ok(Value::unknown(Type::Dynamic)),
                _ => {
                    return Err(EvalError::new(
                        "Invalid expanding argument value",
                        "The expanding argument (indicated by ...) must be of a tuple, list, or set type.",
                    ))
                }
            }
        }
        if self.in_template && matches!(plain, "templatefile" | "templatestring") {
            return Err(EvalError::new(
                "Error in function call",
                format!("Call to function \"{name}\" failed: cannot recursively call {plain} from inside another template function."),
            )
            .or_span(site.call.clone()));
        }
        if self.refuse_files && funcs::READS_FILES.contains(&plain) {
            return Err(EvalError::new(
                "Error in function call",
                format!("Call to function \"{name}\" failed: cannot use filesystem access functions like {plain} in templatestring templates; consider passing the function result as a template variable instead."),
            )
            .or_span(site.call.clone()));
        }
        funcs::call_at(&name, args, &site)
    }

    /// `templatestring`, whose template must be a reference to a string
    /// from elsewhere: a literal template would already have been rendered
    /// with the wrong names in scope.
    fn template_string(
        &self,
        name: &str,
        exprs: &[&Expression],
        site: &funcs::CallSite,
    ) -> Result<Value> {
        if exprs.len() != 2 {
            // Only the count matters: the arity check answers first.
            let placeholders = exprs.iter().map(|_| Value::null(Type::Dynamic)).collect();
            return funcs::call_at(name, placeholders, site);
        }
        let vars = self.eval(exprs[1])?;
        let bad = |why: &str| {
            Err(EvalError::new(
                "Invalid function argument",
                format!(
                    "Invalid value for \"template\" parameter: invalid template expression: {why}."
                ),
            )
            .or_span(exprs[0].span()))
        };
        if vars.is_null() {
            return funcs::call_at(name, vec![Value::string(""), vars], site);
        }
        match exprs[0] {
            Expression::String(_) => return bad(LITERAL),
            Expression::StringTemplate(t) if literal_only(t) => return bad(LITERAL),
            Expression::HeredocTemplate(h) if literal_only(&h.template) => return bad(LITERAL),
            Expression::StringTemplate(_) | Expression::HeredocTemplate(_) => {
                return bad("templatestring is only for rendering templates retrieved dynamically from elsewhere; to render an inline template, consider using a plain template string expression");
            }
            e if !is_reference(e) => {
                return bad("must be a direct reference to a single string from elsewhere, containing valid Terraform template syntax");
            }
            _ => {}
        }
        let template = self.eval(exprs[0])?;
        funcs::call_at(name, vec![template, vars], site)
    }

    fn try_(&self, exprs: &[&Expression]) -> Result<Value> {
        if exprs.is_empty() {
            return Err(EvalError::new(
                "Not enough function arguments",
                "Function \"try\" expects at least one argument.",
            ));
        }
        for e in exprs {
            if let Ok(v) = self.eval(e) {
                if !v.is_wholly_known() {
                    return Ok(Value::unknown(Type::Dynamic));
                }
                return Ok(v);
            }
        }
        Err(EvalError::new(
            "Error in function call",
            "Call to function \"try\" failed: no expression succeeded:\n- all of the given expressions produced errors.",
        ))
    }

    fn can(&self, exprs: &[&Expression]) -> Result<Value> {
        if exprs.len() != 1 {
            return Err(EvalError::new(
                "Not enough function arguments",
                "Function \"can\" expects 1 argument(s). Missing value for \"expression\".",
            ));
        }
        match self.eval(exprs[0]) {
            Ok(v) if !v.is_wholly_known() => Ok(Value::unknown(Type::Bool)),
            Ok(_) => Ok(Value::bool(true)),
            Err(_) => Ok(Value::bool(false)),
        }
    }
}

const LITERAL: &str = "templatestring is only for rendering templates retrieved dynamically from elsewhere, and so does not support providing a literal template; consider using a template string expression instead";

/// Whether a template is only literal text (escapes included).
fn literal_only(t: &Template) -> bool {
    t.iter().all(|e| matches!(e, Element::Literal(_)))
}

/// Whether `e` is a reference HCL can read as an absolute traversal: a
/// name followed by attributes and literal indexes.
fn is_reference(e: &Expression) -> bool {
    match e {
        Expression::Variable(_) => true,
        Expression::Traversal(t) => {
            matches!(t.expr, Expression::Variable(_))
                && t.operators.iter().all(|o| match o.value() {
                    TraversalOperator::GetAttr(_) | TraversalOperator::LegacyIndex(_) => true,
                    TraversalOperator::Index(i) => {
                        matches!(i, Expression::Number(_) | Expression::String(_))
                    }
                    _ => false,
                })
        }
        _ => false,
    }
}

fn number_literal(n: &hcl_edit::Formatted<hcl_edit::Number>) -> Result<Value> {
    let text: String = match n.as_repr() {
        Some(r) => r.chars().filter(|c| !c.is_whitespace()).collect(),
        None => n.value().to_string(),
    };
    Number::parse(&text).map(Value::number).ok_or_else(|| {
        EvalError::new(
            "Invalid number literal",
            format!("Failed to recognize the value of this number literal: {text}."),
        )
    })
}

/// The (key, value) pairs a `for` iterates; `None` when the collection is
/// unknown.
fn iteration(coll: &Value) -> Result<Option<Vec<(Value, Value)>>> {
    let s = coll.sensitive;
    let items = match &coll.kind {
        Kind::Null(_) => {
            return Err(EvalError::new(
                "Iteration over null value",
                "A null value cannot be used as the collection in a 'for' expression.",
            ))
        }
        Kind::Unknown(_) => return Ok(None),
        Kind::List(_, e) | Kind::Tuple(e) => e
            .iter()
            .enumerate()
            .map(|(i, v)| (Value::int(i as i64), v.clone().with_sensitive(s)))
            .collect(),
        Kind::Set(_, e) => e
            .iter()
            .map(|v| (v.clone(), v.clone().with_sensitive(s)))
            .collect(),
        Kind::Map(_, m) | Kind::Object(m) => m
            .iter()
            .map(|(k, v)| (Value::string(k.clone()), v.clone().with_sensitive(s)))
            .collect(),
        _ => {
            return Err(EvalError::new(
                "Iteration over non-iterable value",
                format!(
                    "A value of type {} cannot be used as the collection in a 'for' expression.",
                    coll.ty().friendly_name()
                ),
            ))
        }
    };
    Ok(Some(items))
}

/// `v.name`.
pub fn get_attr(v: Value, name: &str) -> Result<Value> {
    let sensitive = v.sensitive;
    let list_of = match &v.kind {
        Kind::List(el, _) => Some(el),
        Kind::Unknown(Type::List(el)) => Some(el.as_ref()),
        _ => None,
    };
    if let Some(Type::Object { attributes, .. }) = list_of {
        // hcl checks the type first, so a list not yet known is refused as
        // a known one is.
        let hint = if attributes.contains_key(name) {
            format!("attribute {name:?}")
        } else {
            "an attribute".to_string()
        };
        return Err(EvalError::new(
            "Unsupported attribute",
            format!("Can't access attributes on a list of objects. Did you mean to access {hint} for a specific element of the list, or across all elements of the list?"),
        ));
    }
    let out = match v.kind {
        Kind::Null(_) => {
            return Err(EvalError::new(
                "Attempt to get attribute from null value",
                "This value is null, so it does not have any attributes.",
            ))
        }
        Kind::Unknown(Type::Object { attributes, .. }) => match attributes.get(name) {
            Some(t) => Value::unknown(t.clone()),
            None => return Err(unsupported_attr(name)),
        },
        Kind::Unknown(Type::Map(t)) => Value::unknown(*t),
        Kind::Unknown(_) => Value::unknown(Type::Dynamic),
        Kind::Object(mut m) => m.remove(name).ok_or_else(|| unsupported_attr(name))?,
        Kind::Map(_, mut m) => m.remove(name).ok_or_else(|| {
            EvalError::new(
                "Missing map element",
                format!("This map does not have an element with the key {name:?}."),
            )
        })?,
        k @ (Kind::String(_) | Kind::Number(_) | Kind::Bool(_)) => {
            return Err(EvalError::new(
                "Unsupported attribute",
                format!(
                    "Can't access attributes on a primitive-typed value ({}).",
                    Value::from(k).ty().friendly_name()
                ),
            ))
        }
        k => {
            let t = Value::from(k).ty();
            return Err(EvalError::new(
                "Unsupported attribute",
                format!("Can't access attributes on a {}. Did you mean to access an element of the collection?", collection_word(&t)),
            ));
        }
    };
    Ok(out.with_sensitive(sensitive))
}

fn collection_word(t: &Type) -> String {
    match t {
        Type::List(_) => {
            "list of ".to_string() + &t.element().map(|e| e.friendly_name()).unwrap_or_default()
        }
        Type::Set(_) => {
            "set of ".to_string() + &t.element().map(|e| e.friendly_name()).unwrap_or_default()
        }
        Type::Tuple(_) => "tuple".into(),
        t => t.friendly_name(),
    }
}

fn unsupported_attr(name: &str) -> EvalError {
    EvalError::new(
        "Unsupported attribute",
        format!("This object does not have an attribute named {name:?}."),
    )
}

fn invalid_index(why: &str) -> EvalError {
    EvalError::new(
        "Invalid index",
        format!("The given key does not identify an element in this collection value{why}."),
    )
}

/// `v[k]`.
pub fn index(v: Value, k: Value) -> Result<Value> {
    if v.is_null() {
        return Err(EvalError::new(
            "Attempt to index null value",
            "This value is null, so it does not have any indices.",
        ));
    }
    if k.is_null() {
        return Err(EvalError::new(
            "Invalid index",
            "Can't use a null value as an indexing key.",
        ));
    }
    let sensitive = v.sensitive || k.sensitive;
    if !v.is_known() || !k.is_known() {
        let t = match v.ty() {
            Type::List(e) | Type::Map(e) => *e,
            _ => Type::Dynamic,
        };
        return Ok(Value::unknown(t).with_sensitive(sensitive));
    }
    let out = match v.kind {
        Kind::List(_, e) | Kind::Tuple(e) => {
            let n = convert(k, &Type::Number)
                .map_err(|e| invalid_index(&format!(": {}", e.message)))?;
            let n = n.as_number().cloned().unwrap_or_else(Number::zero);
            if !n.is_integer() {
                return Err(invalid_index(": indexing a sequence requires a whole number, but the given index has a fractional part"));
            }
            if n.is_negative() {
                return Err(invalid_index(": a negative number is not a valid index for a sequence"));
            }
            if e.is_empty() {
                return Err(invalid_index(": the collection has no elements"));
            }
            let i = n.to_i64().unwrap_or(i64::MAX) as usize;
            e.into_iter().nth(i).ok_or_else(|| invalid_index(""))?
        }
        Kind::Map(_, mut m) | Kind::Object(mut m) => {
            let key = convert(k, &Type::String).map_err(|_| invalid_index(""))?;
            m.remove(key.as_str().unwrap_or_default()).ok_or_else(|| invalid_index(""))?
        }
        Kind::Set(..) => {
            return Err(EvalError::new(
                "Invalid index",
                "Elements of a set are identified only by their value and don't have any separate index or key to select with, so it's only possible to perform operations across all elements of the set.",
            ))
        }
        _ => {
            return Err(EvalError::new(
                "Invalid index",
                "This value does not have any indices.",
            ))
        }
    };
    Ok(out.with_sensitive(sensitive))
}

fn op_failed(msg: &str) -> EvalError {
    EvalError::new(
        "Operation failed",
        format!("Error during operation: {msg}."),
    )
}

fn operand(v: Value, want: &Type, side: &str) -> Result<Value> {
    if v.is_null() {
        return Err(op_failed("argument must not be null"));
    }
    convert(v, want).map_err(|e| {
        EvalError::new(
            "Invalid operand",
            format!("Unsuitable value for {side} operand: {}.", e.message),
        )
    })
}

fn unary(op: UnaryOperator, v: Value) -> Result<Value> {
    let want = match op {
        UnaryOperator::Neg => Type::Number,
        UnaryOperator::Not => Type::Bool,
    };
    let v = operand(v, &want, "unary")?;
    let s = v.sensitive;
    let out = match (op, &v.kind) {
        (_, Kind::Unknown(_)) => Value::unknown(want),
        (UnaryOperator::Neg, Kind::Number(n)) => Value::number(n.neg()),
        (UnaryOperator::Not, Kind::Bool(b)) => Value::bool(!b),
        _ => unreachable!("operand converted to {want}"),
    };
    Ok(out.with_sensitive(s))
}

fn binary(op: BinaryOperator, l: Value, r: Value) -> Result<Value> {
    use BinaryOperator as B;
    let sensitive = l.sensitive || r.sensitive;
    let out = match op {
        B::Eq | B::NotEq => {
            let eq = equals(&l, &r);
            match eq {
                Some(b) => Value::bool(b == (op == B::Eq)),
                None => Value::unknown(Type::Bool),
            }
        }
        B::And | B::Or => {
            let l = operand(l, &Type::Bool, "left")?;
            let r = operand(r, &Type::Bool, "right")?;
            match (l.as_bool(), r.as_bool(), op) {
                (Some(a), Some(b), B::And) => Value::bool(a && b),
                (Some(a), Some(b), _) => Value::bool(a || b),
                (Some(false), None, B::And) | (None, Some(false), B::And) => Value::bool(false),
                (Some(true), None, B::Or) | (None, Some(true), B::Or) => Value::bool(true),
                _ => Value::unknown(Type::Bool),
            }
        }
        _ => {
            let l = operand(l, &Type::Number, "left")?;
            let r = operand(r, &Type::Number, "right")?;
            let (Some(a), Some(b)) = (l.as_number(), r.as_number()) else {
                let t = if matches!(op, B::Less | B::LessEq | B::Greater | B::GreaterEq) {
                    Type::Bool
                } else {
                    Type::Number
                };
                return Ok(Value::unknown(t).with_sensitive(sensitive));
            };
            let arith = |res: std::result::Result<Number, crate::value::number::NotANumber>| {
                res.map(Value::number)
                    .map_err(|_| op_failed("can't divide zero by zero or infinity by infinity"))
            };
            match op {
                B::Plus => arith(a.add(b))?,
                B::Minus => arith(a.sub(b))?,
                B::Mul => arith(a.mul(b))?,
                B::Div => arith(a.div(b))?,
                B::Mod => arith(a.rem(b))?,
                B::Less => Value::bool(a.compare(b).is_lt()),
                B::LessEq => Value::bool(a.compare(b).is_le()),
                B::Greater => Value::bool(a.compare(b).is_gt()),
                B::GreaterEq => Value::bool(a.compare(b).is_ge()),
                _ => unreachable!("equality and logic handled above"),
            }
        }
    };
    Ok(out.with_sensitive(sensitive))
}

/// cty's `Equals`: `None` when an unknown makes the answer unknown.
pub fn equals(a: &Value, b: &Value) -> Option<bool> {
    if a.is_null() || b.is_null() {
        if !a.is_known() || !b.is_known() {
            return None;
        }
        return Some(a.is_null() && b.is_null());
    }
    if !a.is_known() || !b.is_known() {
        return None;
    }
    if a.ty() != b.ty() {
        return Some(false);
    }
    match (&a.kind, &b.kind) {
        (Kind::List(_, x), Kind::List(_, y))
        | (Kind::Set(_, x), Kind::Set(_, y))
        | (Kind::Tuple(x), Kind::Tuple(y)) => {
            if x.len() != y.len() {
                return Some(false);
            }
            let mut all = Some(true);
            for (p, q) in x.iter().zip(y) {
                match equals(p, q) {
                    Some(false) => return Some(false),
                    None => all = None,
                    _ => {}
                }
            }
            all
        }
        (Kind::Map(_, x), Kind::Map(_, y)) | (Kind::Object(x), Kind::Object(y)) => {
            if x.len() != y.len() || x.keys().ne(y.keys()) {
                return Some(false);
            }
            let mut all = Some(true);
            for (p, q) in x.values().zip(y.values()) {
                match equals(p, q) {
                    Some(false) => return Some(false),
                    None => all = None,
                    _ => {}
                }
            }
            all
        }
        _ => Some(a.same_element(b)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unknown_num() -> Value {
        Value::unknown(Type::Number)
    }

    #[test]
    fn arithmetic_on_unknown_is_unknown_number() {
        let v = binary(BinaryOperator::Plus, unknown_num(), Value::int(1)).unwrap();
        assert!(!v.is_known());
        assert_eq!(v.ty(), Type::Number);
        let c = binary(BinaryOperator::Less, unknown_num(), Value::int(1)).unwrap();
        assert_eq!(c.ty(), Type::Bool);
    }

    #[test]
    fn sensitive_operands_mark_the_result() {
        let v = binary(
            BinaryOperator::Mul,
            Value::int(2).with_sensitive(true),
            Value::int(3),
        )
        .unwrap();
        assert!(v.sensitive);
        assert_eq!(v.as_number().unwrap().to_string_shortest(), "6");
    }

    #[test]
    fn logic_short_circuits_past_unknowns() {
        let f = binary(
            BinaryOperator::And,
            Value::bool(false),
            Value::unknown(Type::Bool),
        )
        .unwrap();
        assert_eq!(f.as_bool(), Some(false));
        let u = binary(
            BinaryOperator::And,
            Value::bool(true),
            Value::unknown(Type::Bool),
        )
        .unwrap();
        assert!(!u.is_known());
    }

    #[test]
    fn unknown_condition_gives_unknown_of_unified_type() {
        let mut s = Scope::default();
        s.vars.insert("u".into(), Value::unknown(Type::Bool));
        let e = hcl_edit::parser::parse_expr("u ? 1 : \"x\"").unwrap();
        let v = s.eval(&e).unwrap();
        assert!(!v.is_known());
        assert_eq!(v.ty(), Type::String);
    }

    #[test]
    fn only_the_chosen_result_of_a_conditional_can_fail() {
        let s = Scope::default()
            .with("u", Value::unknown(Type::Bool))
            .with("empty", Value::tuple(vec![]));
        let eval = |src: &str| s.eval(&hcl_edit::parser::parse_expr(src).unwrap());
        assert_eq!(
            eval("false ? empty[0] : 1")
                .unwrap()
                .as_number()
                .and_then(|n| n.to_i64()),
            Some(1)
        );
        assert_eq!(
            eval("true ? empty[0] : 1").unwrap_err().summary,
            "Invalid index"
        );
        // While the condition is unknown neither result's error counts.
        assert!(!eval("u ? empty[0] : 1").unwrap().is_known());
    }

    #[test]
    fn templates_with_unknowns_are_unknown_strings() {
        let s = Scope::default().with("u", Value::unknown(Type::Number));
        let e = hcl_edit::parser::parse_expr("\"a${u}b\"").unwrap();
        let v = s.eval(&e).unwrap();
        assert!(!v.is_known());
        assert_eq!(v.ty(), Type::String);
    }

    #[test]
    fn indexing_an_unknown_list_gives_unknown_element() {
        let v = index(Value::unknown(Type::list(Type::String)), Value::int(0)).unwrap();
        assert_eq!(v.ty(), Type::String);
        assert!(!v.is_known());
    }
}
